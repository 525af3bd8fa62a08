/**
 * The registrar's cached credentials across nodes: two servers on one Postgres and Redis. Node B
 * answers REGISTERs from its memory (it has just registered the client, so its cache holds the
 * client); every change is made through node A's API, and the very next REGISTER to node B (sipp,
 * started once A's API answered) sees it: a new password (the old one gets 401, the new one 200),
 * a disabled client (403), a suspended account (403, then 200 once active again), a closed account
 * (its clients are gone: 401).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, type Credentials, startTestServer, type TestServer } from '../../support/server.js';
import { runSipp } from '../../support/sipp.js';

let a: TestServer;
let b: TestServer;
let targetB: string;

async function newAccount(email: string): Promise<{ sid: string; creds: Credentials }> {
  const r = await a.request('POST', `${API}/Accounts.json`, {
    form: { EmailAddress: email, Password: 'password-123', Role: 'Developer' },
  });
  expect(r.status).toBe(201);
  return { sid: r.json.sid, creds: { user: r.json.sid, secret: r.json.auth_token } };
}

async function newClient(owner: { sid: string }, login: string, password: string): Promise<string> {
  const r = await a.request('POST', `${API}/Accounts/${owner.sid}/Clients.json`, {
    form: { Login: login, Password: password },
  });
  expect(r.status).toBe(201);
  return r.json.sid as string;
}

/** One REGISTER with digest to node B; resolves with sipp's exit code (0: the scenario held). */
async function registerAtB(
  login: string,
  password: string,
  scenario:
    | 'uac-register-expect-200.xml'
    | 'uac-register-expect-403.xml'
    | 'uac-register-wrong-password-expect-401.xml',
): Promise<void> {
  const r = await runSipp({
    scenario,
    remote: targetB,
    service: login,
    auth: { user: login, password },
    keys: { expires: '60' },
  });
  expect(r.errors).toBe('');
  expect(r.code).toBe(0);
}

beforeAll(async () => {
  a = await startTestServer({ label: 'regcache', env: { SIP_REGISTRAR_MIN_EXPIRES: '1' } });
  b = await startTestServer({ ns: a.ns, env: { SIP_REGISTRAR_MIN_EXPIRES: '1' } });
  targetB = `127.0.0.1:${b.server.sip?.stack.port}`;
});
afterAll(async () => {
  await b?.stop();
  await a?.dispose();
});

describe('a change made on node A refuses the next REGISTER on node B', () => {
  it('a new password: the old one gets 401, the new one 200', async () => {
    const owner = await newAccount('regcache-pw@example.test');
    const sid = await newClient(owner, 'pwchange', 'first-secret-1');
    await registerAtB('pwchange', 'first-secret-1', 'uac-register-expect-200.xml');
    const r = await a.request('POST', `${API}/Accounts/${owner.sid}/Clients/${sid}.json`, {
      auth: owner.creds,
      form: { Password: 'second-secret-2' },
    });
    expect(r.status).toBe(200);
    await registerAtB('pwchange', 'first-secret-1', 'uac-register-wrong-password-expect-401.xml');
    await registerAtB('pwchange', 'second-secret-2', 'uac-register-expect-200.xml');
  });

  it('a disabled client gets 403, and registers again once enabled', async () => {
    const owner = await newAccount('regcache-off@example.test');
    const sid = await newClient(owner, 'disableme', 'disable-secret-1');
    await registerAtB('disableme', 'disable-secret-1', 'uac-register-expect-200.xml');
    const path = `${API}/Accounts/${owner.sid}/Clients/${sid}.json`;
    expect((await a.request('POST', path, { auth: owner.creds, form: { Status: '0' } })).status).toBe(200);
    await registerAtB('disableme', 'disable-secret-1', 'uac-register-expect-403.xml');
    expect((await a.request('POST', path, { auth: owner.creds, form: { Status: '1' } })).status).toBe(200);
    await registerAtB('disableme', 'disable-secret-1', 'uac-register-expect-200.xml');
  });

  it('a suspended account: its client gets 403, and registers again once the account is active', async () => {
    const owner = await newAccount('regcache-susp@example.test');
    await newClient(owner, 'suspendme', 'suspend-secret-1');
    await registerAtB('suspendme', 'suspend-secret-1', 'uac-register-expect-200.xml');
    const path = `${API}/Accounts/${owner.sid}.json`;
    expect((await a.request('POST', path, { form: { Status: 'suspended' } })).status).toBe(200);
    await registerAtB('suspendme', 'suspend-secret-1', 'uac-register-expect-403.xml');
    expect((await a.request('POST', path, { form: { Status: 'active' } })).status).toBe(200);
    await registerAtB('suspendme', 'suspend-secret-1', 'uac-register-expect-200.xml');
  });

  it('a closed account: its clients are gone, so the digest fails (401)', async () => {
    const owner = await newAccount('regcache-close@example.test');
    await newClient(owner, 'closeme', 'close-secret-1');
    await registerAtB('closeme', 'close-secret-1', 'uac-register-expect-200.xml');
    const r = await a.request('POST', `${API}/Accounts/${owner.sid}.json`, { form: { Status: 'closed' } });
    expect(r.status).toBe(200);
    await registerAtB('closeme', 'close-secret-1', 'uac-register-wrong-password-expect-401.xml');
  });

  it('a client created after a REGISTER for its login was refused registers at once', async () => {
    const owner = await newAccount('regcache-new@example.test');
    await registerAtB('latecomer', 'late-secret-1', 'uac-register-wrong-password-expect-401.xml');
    await newClient(owner, 'latecomer', 'late-secret-1');
    await registerAtB('latecomer', 'late-secret-1', 'uac-register-expect-200.xml');
  });
});
