/**
 * Two nodes on one Postgres and Redis. Each node keeps account records (and verified passwords) in
 * memory for 30 s, so only the change notice can make a change on one node take effect on the
 * other within a second: a new AuthToken (set with a new password), a suspended account and a
 * closed one are refused on the other node's next request. Failed-login throttling still counts
 * across nodes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNamespace, type TestNamespace } from '../../support/namespace.js';
import {
  API,
  type ApiResponse,
  type Credentials,
  startTestServer,
  type TestServer,
} from '../../support/server.js';
import { until } from '../../support/until.js';

const ENV = {
  SIP_ENABLED: 'false',
  AUTH_MAX_FAILURES_PER_IDENTITY: '3',
  AUTH_MAX_FAILURES_PER_IP: '1000',
  AUTH_FAILURE_WINDOW_SECONDS: '60',
  AUTH_TARPIT_MS: '0',
};
/** The requirement: a change is in force on every node within this time. */
const WITHIN_MS = 1000;

let ns: TestNamespace;
let a: TestServer;
let b: TestServer;
let seq = 0;

beforeAll(async () => {
  ns = await createNamespace('credcache');
  a = await startTestServer({ ns, env: ENV });
  b = await startTestServer({ ns, env: ENV });
});
afterAll(async () => {
  await b?.server.close();
  await a?.dispose();
});

interface Sub {
  readonly sid: string;
  readonly token: Credentials;
  readonly password: Credentials;
}

async function subAccount(): Promise<Sub> {
  const email = `cache-${++seq}@example.test`;
  const r = await a.request('POST', `${API}/Accounts.json`, {
    form: { EmailAddress: email, Password: 'first-password-1', Role: 'Developer' },
  });
  expect(r.status, r.text).toBe(201);
  return {
    sid: r.json.sid,
    token: { user: r.json.sid, secret: r.json.auth_token },
    password: { user: email, secret: 'first-password-1' },
  };
}

const getOn = (node: TestServer, auth: Credentials, sid: string) =>
  node.request('GET', `${API}/Accounts/${sid}.json`, { auth });

/** Polls node's answer for at most WITHIN_MS; returns the last answer and when it came. */
async function answerWithin(node: TestServer, auth: Credentials, sid: string, status: number) {
  const start = Date.now();
  const r = await until<ApiResponse>(
    () => getOn(node, auth, sid),
    (x) => x.status === status,
    WITHIN_MS,
  );
  return { status: r.status, ms: Date.now() - start };
}

/** Both nodes answer 200 to the token and to the password: both have the record (and B the verified password) cached. */
async function warm(s: Sub): Promise<void> {
  for (const node of [a, b]) {
    expect((await getOn(node, s.token, s.sid)).status).toBe(200);
    expect((await getOn(node, s.password, s.sid)).status).toBe(200);
  }
}

describe('credential cache across nodes', () => {
  it('a new AuthToken (new password) set on A: the old token and password are refused on B within a second, the new ones work', async () => {
    const s = await subAccount();
    await warm(s);
    const changed = await a.request('POST', `${API}/Accounts/${s.sid}.json`, {
      form: { Password: 'second-password-2' },
    });
    expect(changed.status, changed.text).toBe(200);
    const newToken = { user: s.sid, secret: changed.json.auth_token as string };
    expect(newToken.secret).not.toBe(s.token.secret);

    const oldToken = await answerWithin(b, s.token, s.sid, 401);
    expect(oldToken.status).toBe(401);
    expect(oldToken.ms).toBeLessThanOrEqual(WITHIN_MS + 500);
    expect((await getOn(b, s.password, s.sid)).status).toBe(401);
    expect((await getOn(b, newToken, s.sid)).status).toBe(200);
    expect((await getOn(b, { user: s.password.user, secret: 'second-password-2' }, s.sid)).status).toBe(200);
    // And on the node that made the change, at once.
    expect((await getOn(a, s.token, s.sid)).status).toBe(401);
  });

  it('an account suspended on A is refused on B within a second (token and password), and works again once reactivated', async () => {
    const s = await subAccount();
    await warm(s);
    const suspended = await a.request('POST', `${API}/Accounts/${s.sid}.json`, {
      form: { Status: 'suspended' },
    });
    expect(suspended.status, suspended.text).toBe(200);

    const r = await answerWithin(b, s.token, s.sid, 403);
    expect(r.status).toBe(403);
    expect(r.ms).toBeLessThanOrEqual(WITHIN_MS + 500);
    const byPassword = await getOn(b, s.password, s.sid);
    expect(byPassword.status).toBe(403);
    expect(byPassword.json.code).toBe(20005);

    expect(
      (await a.request('POST', `${API}/Accounts/${s.sid}.json`, { form: { Status: 'active' } })).status,
    ).toBe(200);
    expect((await answerWithin(b, s.token, s.sid, 200)).status).toBe(200);
  });

  it('an account closed on B is refused on A within a second', async () => {
    const s = await subAccount();
    await warm(s);
    const closed = await b.request('POST', `${API}/Accounts/${s.sid}.json`, { form: { Status: 'closed' } });
    expect(closed.status, closed.text).toBe(200);

    const r = await answerWithin(a, s.token, s.sid, 403);
    expect(r.status).toBe(403);
    expect(r.ms).toBeLessThanOrEqual(WITHIN_MS + 500);
    expect((await getOn(a, s.password, s.sid)).status).toBe(403);
  });

  it('failed password logins count across nodes: blocked on both after the limit, the AuthToken still works', async () => {
    const s = await subAccount();
    const wrong = { user: s.password.user, secret: 'not-the-password' };
    // Three failures, spread over both nodes, reach the limit of three.
    expect((await getOn(a, wrong, s.sid)).status).toBe(401);
    expect((await getOn(b, wrong, s.sid)).status).toBe(401);
    expect((await getOn(a, wrong, s.sid)).status).toBe(401);
    for (const node of [a, b]) {
      const blocked = await getOn(node, s.password, s.sid);
      expect(blocked.status).toBe(429);
      expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await getOn(node, s.token, s.sid)).status).toBe(200);
    }
  });
});

describe('effective-profile cache across nodes', () => {
  it('a profile linked, then unlinked, on A changes the Link header of the account on B within a second', async () => {
    const s = await subAccount();
    const linkOf = async () => (await getOn(b, s.token, s.sid)).headers.get('link') as string;
    const before = await linkOf();
    const created = await a.request('POST', `${API}/Profiles`, {
      body: JSON.stringify({}),
      headers: {
        'content-type': `application/instance+json;schema=${a.url}${API}/Profiles/schemas/rc-profile-schema.json`,
      },
    });
    expect(created.status, created.text).toBe(201);
    const profileSid = (created.headers.get('location') as string).split('/').pop() as string;
    const change = (op: 'LINK' | 'UNLINK') =>
      a.request('PUT', `${API}/Profiles/${profileSid}`, {
        headers: {
          'x-http-method-override': op,
          link: `<${a.url}${API}/Accounts/${s.sid}>;rel=related`,
        },
      });

    expect((await change('LINK')).status).toBe(200);
    const linked = await until(linkOf, (l) => l.includes(profileSid), WITHIN_MS);
    expect(linked).toContain(`/Profiles/${profileSid}>`);
    expect((await change('UNLINK')).status).toBe(200);
    expect(await until(linkOf, (l) => l === before, WITHIN_MS)).toBe(before);
  });
});
