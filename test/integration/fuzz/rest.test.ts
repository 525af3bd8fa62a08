/**
 * REST fuzz, driven by the route table: every route × method (and one unsupported method) with
 * hostile values — NUL, 1 MB strings, lone surrogates, `../`, SQL/XML meta characters, huge page
 * numbers, negative sizes, deep or broken JSON — and another account's sids. Asserts no 5xx, the
 * error catalogue's shape on every 4xx, and no trace of the other account in any body.
 * Size: FUZZ_SCALE (default 1: a few hundred requests); the seed is printed with every failure.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fuzzScale, fuzzSeed } from '../../support/fuzz/prng.js';
import { type RestCase, restCases } from '../../support/fuzz/rest.js';
import { receivedSms } from '../../support/records.js';
import { API, basic, type Credentials, startTestServer, type TestServer } from '../../support/server.js';

const SCALE = fuzzScale();
const SEED = fuzzSeed(SCALE > 1 ? Date.now() % 1_000_000 : 1);

let ts: TestServer;
let caller: { sid: string; creds: Credentials };
const foreignSids: Record<string, string> = {};
/** Strings that only the foreign account's data contains. */
const markers: string[] = [];

async function createAccount(email: string, friendlyName: string) {
  const res = await ts.request('POST', `${API}/Accounts.json`, {
    form: {
      EmailAddress: email,
      Password: 'password-123',
      Role: 'Administrator',
      FriendlyName: friendlyName,
    },
  });
  expect(res.status, res.text).toBe(201);
  return { sid: res.json.sid as string, creds: { user: res.json.sid, secret: res.json.auth_token } };
}

beforeAll(async () => {
  ts = await startTestServer({ label: 'fuzzrest' });
  caller = await createAccount('caller@example.test', 'caller account');
  const foreign = await createAccount('foreigner@example.test', 'FOREIGNACCOUNTNAME');
  markers.push(foreign.sid, 'foreigner@example.test', 'FOREIGNACCOUNTNAME');
  const as = { auth: foreign.creds };
  foreignSids.accountSid = foreign.sid;
  const app = await ts.request('POST', `${API}/Accounts/${foreign.sid}/Applications.json`, {
    ...as,
    form: { FriendlyName: 'FOREIGNAPPNAME' },
  });
  expect(app.status, app.text).toBe(201);
  foreignSids.applicationSid = app.json.sid;
  const client = await ts.request('POST', `${API}/Accounts/${foreign.sid}/Clients.json`, {
    ...as,
    form: { Login: 'foreignlogin', Password: 'password-123', FriendlyName: 'FOREIGNCLIENTNAME' },
  });
  expect(client.status, client.text).toBe(201);
  foreignSids.clientSid = client.json.sid;
  const n = await ts.server.notifier.notify({
    accountSid: foreign.sid,
    errorCode: 11200,
    messageText: 'FOREIGNNOTIFICATION',
  });
  foreignSids.notificationSid = n?.sid as string;
  const sms = receivedSms(foreign.sid, { body: 'FOREIGNSMSBODY' });
  await ts.server.smsStore.insert(sms);
  foreignSids.messageSid = sms.sid;
  markers.push(
    app.json.sid,
    'FOREIGNAPPNAME',
    client.json.sid,
    'foreignlogin',
    'FOREIGNCLIENTNAME',
    foreignSids.notificationSid as string,
    'FOREIGNNOTIFICATION',
    sms.sid,
    'FOREIGNSMSBODY',
  );
});
afterAll(async () => {
  await ts?.dispose();
});

async function send(c: RestCase) {
  const res = await fetch(ts.url + c.path, {
    method: c.method,
    headers: { authorization: basic(caller.creds), ...c.headers },
    ...(c.body === undefined ? {} : { body: c.body }),
    // A request the server never answers is a defect too; fail it with its case rather than hang.
    signal: AbortSignal.timeout(15_000),
  });
  return { status: res.status, text: await res.text(), type: res.headers.get('content-type') ?? '' };
}

/** The catalogue's error body (docs/errors.md), in JSON or XML. */
function assertErrorShape(c: RestCase, r: { status: number; text: string; type: string }, where: string) {
  if (r.type.includes('json')) {
    const body = JSON.parse(r.text);
    expect(body, where).toMatchObject({
      code: expect.any(Number),
      message: expect.any(String),
      more_info: expect.any(String),
      status: r.status,
    });
  } else {
    expect(r.type, where).toMatch(/xml/);
    expect(r.text, where).toMatch(/<RestException><Code>\d+<\/Code><Message>[^<]*<\/Message>/);
    expect(r.text, where).toContain(`<Status>${r.status}</Status>`);
  }
  void c;
}

describe(`REST fuzz (seed ${SEED}, scale ${SCALE})`, () => {
  it(
    'no 5xx, the catalogue shape on 4xx, no foreign data, for every route × method',
    async () => {
      const routes = ts.server.app.routes.entries;
      expect(routes.length).toBeGreaterThan(20);
      const cases = restCases(
        routes,
        { ownAccountSid: caller.sid, foreignSids },
        { seed: SEED, perRoute: 2 * SCALE },
      );
      let next = 0;
      const statuses = new Map<number, number>();
      const slow: string[] = [];
      const worker = async () => {
        while (next < cases.length) {
          const c = cases[next++] as RestCase;
          const started = Date.now();
          const r = await send(c).catch((e: Error) => ({
            status: 599,
            text: `no answer: ${e.message}`,
            type: '',
          }));
          if (Date.now() - started > 2000)
            slow.push(`${Date.now() - started} ms ${c.method} ${c.path.slice(0, 120)} [${c.label}]`);
          const where = `seed ${SEED}: ${c.method} ${c.path.slice(0, 200)} [${c.label}] → ${r.status} ${r.text.slice(0, 300)}`;
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          // A valid new Password on the caller's own account rotates its AuthToken (spec): follow it.
          if (r.status === 200 && c.path.startsWith(`${API}/Accounts/${caller.sid}`)) {
            const token = /"auth_token":"(\w+)"|<AuthToken>(\w+)<\/AuthToken>/.exec(r.text);
            const fresh = token?.[1] ?? token?.[2];
            if (fresh) caller = { sid: caller.sid, creds: { user: caller.sid, secret: fresh } };
          }
          expect(r.status, where).toBeLessThan(500);
          if (r.status >= 400) assertErrorShape(c, r, where);
          // Echoing a sid the request itself named (a 404's message) reveals nothing.
          const sent = `${c.path} ${c.body ?? ''} ${JSON.stringify(c.headers)}`;
          for (const m of markers) {
            if (!sent.includes(m)) expect(r.text.includes(m), `${where} leaks ${m}`).toBe(false);
          }
        }
      };
      await Promise.all([worker(), worker(), worker(), worker()]).finally(() => {
        if (slow.length) console.log('slow cases', slow.slice(0, 20));
      });
      expect(cases.length).toBeGreaterThan(100);
      // The node still serves.
      expect(
        (await ts.request('GET', `${API}/Accounts/${caller.sid}.json`, { auth: caller.creds })).status,
      ).toBe(200);
      console.log(`REST fuzz seed ${SEED}: ${cases.length} requests`, Object.fromEntries(statuses), slow);
    },
    120_000 * Math.max(1, SCALE),
  );
});
