/**
 * Registrar with digest over UDP and TCP against sipp (spec §Client, Authentication 7): 401 then
 * 200; a wrong password gets 401 again; a disabled client or a suspended account gets 403;
 * Expires 0 unregisters; bindings expire; the registered-user count follows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, type Credentials, startTestServer, type TestServer } from '../../support/server.js';
import { runSipp } from '../../support/sipp.js';

let ts: TestServer;
let owner: { sid: string; creds: Credentials };
let sipTarget: string;

const as = (opts: Parameters<TestServer['request']>[2] = {}) => ({ auth: owner.creds, ...opts });
const domain = () => ts.server.config.organization.defaultDomain;

async function createClient(login: string, password: string, status = '1'): Promise<string> {
  const r = await ts.request(
    'POST',
    `${API}/Accounts/${owner.sid}/Clients.json`,
    as({ form: { Login: login, Password: password, Status: status } }),
  );
  expect(r.status).toBe(201);
  return r.json.sid as string;
}

async function waitFor<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  ts = await startTestServer({ label: 'registrar', env: { SIP_REGISTRAR_MIN_EXPIRES: '1' } });
  const res = await ts.request('POST', `${API}/Accounts.json`, {
    form: { EmailAddress: 'registrar@example.test', Password: 'password-123', Role: 'Developer' },
  });
  owner = { sid: res.json.sid, creds: { user: res.json.sid, secret: res.json.auth_token } };
  sipTarget = `127.0.0.1:${ts.server.sip?.stack.port}`;
});
afterAll(async () => {
  await ts?.dispose();
});

describe.each([
  ['UDP', 'u1'],
  ['TCP', 't1'],
] as const)('REGISTER over %s', (name, transport) => {
  const login = `alice${name.toLowerCase()}`;
  beforeAll(async () => {
    await createClient(login, 'alice-secret-1');
  });

  it('401 then 200 with the right password, and the binding is stored with its flow', async () => {
    const r = await runSipp({
      scenario: 'uac-register-expect-200.xml',
      remote: sipTarget,
      service: login,
      transport,
      auth: { user: login, password: 'alice-secret-1' },
      keys: { expires: '3600' },
    });
    expect(r.errors).toBe('');
    expect(r.code).toBe(0);
    const bindings = await ts.server.sip!.registrar.locate(login, domain());
    expect(bindings).toHaveLength(1);
    expect(bindings[0]).toMatchObject({
      aor: `${login}@${domain()}`,
      accountSid: owner.sid,
      flow: { protocol: name, address: '127.0.0.2', port: r.localPort },
    });
    expect(bindings[0]!.expiresAt - Date.now()).toBeGreaterThan(3500_000);
  });

  it('a wrong password is challenged again (401) and never registers', async () => {
    const r = await runSipp({
      scenario: 'uac-register-wrong-password-expect-401.xml',
      remote: sipTarget,
      service: `${login}x`,
      transport,
      auth: { user: `${login}x`, password: 'wrong' },
    });
    expect(r.code).toBe(0);
    expect(await ts.server.sip!.registrar.locate(`${login}x`, domain())).toHaveLength(0);
  });

  it('Expires 0 removes the binding', async () => {
    const r = await runSipp({
      scenario: 'uac-unregister-expect-200.xml',
      remote: sipTarget,
      service: login,
      transport,
      auth: { user: login, password: 'alice-secret-1' },
    });
    expect(r.errors).toBe('');
    expect(r.code).toBe(0);
    const left = await ts.server.sip!.registrar.locate(login, domain());
    expect(left.filter((b) => b.flow.port === r.localPort)).toHaveLength(0);
  });
});

describe('REGISTER refusals and expiry', () => {
  it('a disabled client gets 403', async () => {
    await createClient('disabled', 'disabled-secret-1', '0');
    const r = await runSipp({
      scenario: 'uac-register-expect-403.xml',
      remote: sipTarget,
      service: 'disabled',
      auth: { user: 'disabled', password: 'disabled-secret-1' },
    });
    expect(r.errors).toBe('');
    expect(r.code).toBe(0);
  });

  it('a client of a suspended account gets 403, and registers again once it is active', async () => {
    const sub = await ts.request('POST', `${API}/Accounts.json`, {
      form: { EmailAddress: 'suspended@example.test', Password: 'password-123' },
    });
    expect(sub.status).toBe(201);
    const c = await ts.request('POST', `${API}/Accounts/${sub.json.sid}/Clients.json`, {
      form: { Login: 'carol', Password: 'carol-secret-1' },
    });
    expect(c.status).toBe(201);
    const suspend = await ts.request('POST', `${API}/Accounts/${sub.json.sid}.json`, {
      form: { Status: 'suspended' },
    });
    expect(suspend.status).toBe(200);
    const refused = await runSipp({
      scenario: 'uac-register-expect-403.xml',
      remote: sipTarget,
      service: 'carol',
      auth: { user: 'carol', password: 'carol-secret-1' },
    });
    expect(refused.errors).toBe('');
    expect(refused.code).toBe(0);
    await ts.request('POST', `${API}/Accounts/${sub.json.sid}.json`, { form: { Status: 'active' } });
    const ok = await runSipp({
      scenario: 'uac-register-expect-200.xml',
      remote: sipTarget,
      service: 'carol',
      auth: { user: 'carol', password: 'carol-secret-1' },
      keys: { expires: '60' },
    });
    expect(ok.code).toBe(0);
  });

  it('a binding expires by itself and the registered-user count follows', async () => {
    await createClient('shortlived', 'short-secret-1');
    const before = await ts.server.sip!.registrar.countRegistered();
    const r = await runSipp({
      scenario: 'uac-register-expect-200.xml',
      remote: sipTarget,
      service: 'shortlived',
      auth: { user: 'shortlived', password: 'short-secret-1' },
      keys: { expires: '2' },
    });
    expect(r.code).toBe(0);
    expect(await ts.server.sip!.registrar.locate('shortlived', domain())).toHaveLength(1);
    expect(await ts.server.sip!.registrar.countRegistered()).toBe(before + 1);
    const gone = await waitFor(
      () => ts.server.sip!.registrar.locate('shortlived', domain()),
      (b) => b.length === 0,
      6000,
    );
    expect(gone).toHaveLength(0);
    expect(await ts.server.sip!.registrar.countRegistered()).toBe(before);
  });
});
