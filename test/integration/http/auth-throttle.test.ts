/**
 * Login abuse: failed password logins are throttled per identity and per client address (429 +
 * Retry-After, counters in Redis so every node sees them), password verifications run with bounded
 * concurrency (429 + Retry-After: 1 beyond the queue), and unknown users go through the same
 * verification as known ones. AuthTokens keep working while passwords are throttled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis } from '../../../src/store/redis/client.js';
import { API, type Credentials, startTestServer, type TestServer } from '../../support/server.js';

let ts: TestServer;
let seq = 0;

async function account(): Promise<{ sid: string; email: string; token: Credentials }> {
  const email = `throttle-${++seq}@example.test`;
  const r = await ts.request('POST', `${API}/Accounts.json`, {
    form: { EmailAddress: email, Password: 'right-password-1', Role: 'Developer' },
  });
  expect(r.status, r.text).toBe(201);
  return { sid: r.json.sid, email, token: { user: r.json.sid, secret: r.json.auth_token } };
}

const get = (auth: Credentials, sid: string) => ts.request('GET', `${API}/Accounts/${sid}.json`, { auth });

beforeAll(async () => {
  ts = await startTestServer({
    label: 'auththrottle',
    env: {
      AUTH_MAX_FAILURES_PER_IDENTITY: '3',
      AUTH_MAX_FAILURES_PER_IP: '40',
      AUTH_FAILURE_WINDOW_SECONDS: '60',
      AUTH_VERIFY_CONCURRENCY: '1',
      AUTH_VERIFY_QUEUE: '2',
      AUTH_TARPIT_MS: '0',
    },
  });
});
afterAll(async () => {
  await ts?.dispose();
});

/**
 * Clears the failure counters (this file's namespace only) between cases. Blocks a node has
 * already seen stay in its memory until they end, so the case that blocks the address runs last.
 */
async function resetCounters() {
  const redis = await connectRedis(ts.ns.redisUrl);
  try {
    for await (const keys of redis.scanIterator({ MATCH: `${ts.ns.redisPrefix}:auth:*`, COUNT: 100 })) {
      if (keys.length) await redis.del(keys);
    }
  } finally {
    await redis.quit();
  }
}

describe('per identity', () => {
  it('429 with Retry-After after the limit, for the email and the sid alike; the AuthToken still works', async () => {
    await resetCounters();
    const a = await account();
    for (let i = 0; i < 3; i++) {
      const res = await get({ user: a.email, secret: `wrong-${i}` }, a.sid);
      expect(res.status).toBe(401);
    }
    const blocked = await get({ user: a.sid, secret: 'wrong-again' }, a.sid);
    expect(blocked.status).toBe(429);
    expect(blocked.json).toMatchObject({ code: 20429, status: 429 });
    const retry = Number(blocked.headers.get('retry-after'));
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(60);
    // Even the right password waits: answering it would tell a guesser it is right.
    expect((await get({ user: a.email, secret: 'right-password-1' }, a.sid)).status).toBe(429);
    expect((await get(a.token, a.sid)).status).toBe(200);
    // Another identity from the same address is not blocked yet.
    const b = await account();
    expect((await get({ user: b.email, secret: 'right-password-1' }, b.sid)).status).toBe(200);
  });

  it('a successful login clears its identity counter', async () => {
    await resetCounters();
    const a = await account();
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 2; i++)
        expect((await get({ user: a.email, secret: 'nope' }, a.sid)).status).toBe(401);
      expect((await get({ user: a.email, secret: 'right-password-1' }, a.sid)).status).toBe(200);
      await resetCountersOfSource();
    }
  });
});

/** Only the per-address counters (so a case can test identities without tripping the address limit). */
async function resetCountersOfSource() {
  const redis = await connectRedis(ts.ns.redisUrl);
  try {
    for await (const keys of redis.scanIterator({
      MATCH: `${ts.ns.redisPrefix}:auth:fail:ip:*`,
      COUNT: 100,
    })) {
      if (keys.length) await redis.del(keys);
    }
  } finally {
    await redis.quit();
  }
}

describe('verification budget', () => {
  it('unknown and known users both go through the bounded verifier: beyond its queue, 429 + Retry-After: 1', async () => {
    await resetCounters();
    const a = await account();
    for (const user of [a.email, 'unknown-user@example.test']) {
      await resetCounters();
      // One runs, two wait (AUTH_VERIFY_CONCURRENCY=1, AUTH_VERIFY_QUEUE=2): of 12 at once, some overflow.
      const all = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          ts.request('GET', `${API}/Accounts.json`, { auth: { user, secret: `wrong-${i}` } }),
        ),
      );
      const statuses = all.map((r) => r.status);
      // The identity limit is 3, so any 429 among 12 first attempts is the verifier refusing overflow.
      const refused = all.filter((x) => x.status === 429);
      expect(refused.length, `${user}: ${statuses}`).toBeGreaterThan(0);
      const overflow = refused.filter((r) => /being checked/.test(r.json.message));
      expect(overflow.length, `${user}: ${statuses}`).toBeGreaterThan(0);
      for (const r of overflow) {
        expect(r.headers.get('retry-after')).toBe('1');
        expect(r.json).toMatchObject({ code: 20429, status: 429 });
      }
      expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
    }
  });

  it('a verified password is remembered: the right password keeps working under a saturated verifier', async () => {
    await resetCounters();
    const a = await account();
    const creds = { user: a.email, secret: 'right-password-1' };
    expect((await get(creds, a.sid)).status).toBe(200);
    const flood = Array.from({ length: 10 }, (_, i) =>
      ts.request('GET', `${API}/Accounts.json`, {
        auth: { user: `flood-${i}@example.test`, secret: 'x-123' },
      }),
    );
    const ok = await get(creds, a.sid);
    await Promise.all(flood);
    expect(ok.status).toBe(200);
  });
});

describe('per address', () => {
  it('spraying many unknown users from one address ends in 429 for every password attempt', async () => {
    await resetCounters();
    const statuses: number[] = [];
    for (let i = 0; i < 42; i++) {
      const res = await ts.request('GET', `${API}/Accounts.json`, {
        auth: { user: `nobody-${i}@example.test`, secret: 'guess-123' },
      });
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 40)).toEqual(Array(40).fill(401));
    expect(statuses.slice(40)).toEqual([429, 429]);
    const a = await account();
    expect((await get({ user: a.email, secret: 'right-password-1' }, a.sid)).status).toBe(429);
    expect((await get(a.token, a.sid)).status).toBe(200);
  });

  it('the counters live in Redis under the deployment prefix, with an expiry', async () => {
    const redis = await connectRedis(ts.ns.redisUrl);
    try {
      const keys: string[] = [];
      for await (const batch of redis.scanIterator({ MATCH: `${ts.ns.redisPrefix}:auth:fail:*`, COUNT: 100 }))
        keys.push(...batch);
      expect(keys.length).toBeGreaterThan(0);
      for (const k of keys) {
        const ttl = await redis.pTTL(k);
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(60_000);
        // Identity keys hold a hash, never the user name.
        expect(k).not.toMatch(/@/);
      }
    } finally {
      await redis.quit();
    }
  });
});
