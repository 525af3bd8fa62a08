/**
 * Registrations on the supervisor stream against a real server and sipp: REGISTER, un-REGISTER
 * (Expires 0) and a binding that runs out reach a stream client as `registration.changed`
 * registered → unregistered → registered → expired, in seq order; a client of a second node on the
 * same Redis sees the same; an Administrator's account-scoped stream shows its own tree's clients
 * and another tenant's shows none of them; the snapshot lists the live bindings.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../ops/lib/ports.js';
import { StreamClient, type StreamFrame } from '../../ops/lib/stream-client.js';
import { API, type Credentials, startTestServer, type TestServer } from '../support/server.js';
import { runSipp } from '../support/sipp.js';

let ts: TestServer;
let b: TestServer;
let tenant: { sid: string; creds: Credentials };
let stranger: { sid: string; creds: Credentials };
let target: string;
const open: StreamClient[] = [];

async function administrator(email: string) {
  const r = await ts.request('POST', `${API}/Accounts.json`, {
    auth: ts.admin,
    form: { EmailAddress: email, Password: 'password-123', Role: 'Administrator' },
  });
  expect(r.status).toBe(201);
  return {
    sid: r.json.sid as string,
    creds: { user: r.json.sid as string, secret: r.json.auth_token as string },
  };
}

beforeAll(async () => {
  ts = await startTestServer({ label: 'sup-reg', env: { SIP_REGISTRAR_MIN_EXPIRES: '1' } });
  b = await startTestServer({ ns: ts.ns, env: { SIP_ENABLED: 'false' } });
  tenant = await administrator('reg-admin@example.test');
  stranger = await administrator('reg-stranger@example.test');
  target = `127.0.0.1:${ts.server.sip!.stack.port}`;
});
afterAll(async () => {
  for (const c of open) c.close();
  await b?.stop();
  await ts?.dispose();
});

async function connect(
  server: TestServer,
  auth: Credentials,
  accountSid: string,
  query: Record<string, string> = {},
) {
  const c = await StreamClient.open({ url: server.url, accountSid, auth, query });
  open.push(c);
  await c.next((f) => f.type === 'snapshot');
  return c;
}

const registrationFrames = (c: StreamClient) => c.frames.filter((f) => f.type === 'registration.changed');
const stateOf = (f: StreamFrame) => [f.state, (f.registration as { aor: string }).aor];

describe('supervisor stream registrations', () => {
  it('REGISTER, un-REGISTER and expiry reach every node and scope in order', async () => {
    const login = 'dora';
    const created = await ts.request('POST', `${API}/Accounts/${tenant.sid}/Clients.json`, {
      auth: tenant.creds,
      form: { Login: login, Password: 'dora-secret-1' },
    });
    expect(created.status).toBe(201);
    const aor = `${login}@${ts.server.config.organization.defaultDomain.toLowerCase()}`;

    const onA = await connect(ts, ts.admin, ts.admin.sid);
    const own = await connect(ts, tenant.creds, tenant.sid, { Scope: 'account' });
    const other = await connect(ts, stranger.creds, stranger.sid, { Scope: 'account' });
    const onB = await connect(b, b.admin, b.admin.sid);

    const localPort = await freePort('127.0.0.2');
    const register = (expires: string) =>
      runSipp({
        scenario: 'uac-register-expect-200.xml',
        remote: target,
        service: login,
        localPort,
        auth: { user: login, password: 'dora-secret-1' },
        keys: { expires },
      });
    expect((await register('60')).code).toBe(0);
    const added = await own.next((f) => f.type === 'registration.changed');
    expect(added).toMatchObject({
      state: 'registered',
      seq: expect.any(Number),
      at: expect.any(Number),
      registration: {
        aor,
        accountSid: tenant.sid,
        clientSid: created.json.sid,
        contact: `sip:${login}@127.0.0.2:${localPort};transport=UDP`,
        transport: 'UDP',
        source: `127.0.0.2:${localPort}`,
        node: ts.server.config.instanceId,
      },
    });
    // A fresh client's snapshot lists the binding.
    const late = await StreamClient.open({
      url: ts.url,
      accountSid: tenant.sid,
      auth: tenant.creds,
      query: { Scope: 'account' },
    });
    open.push(late);
    const snap = await late.next((f) => f.type === 'snapshot');
    expect(snap.registrations).toEqual([added.registration]);
    expect(snap.metrics).toMatchObject({ RegisteredUsers: 1 });

    expect((await register('0')).code).toBe(0);
    expect((await register('2')).code).toBe(0);
    const want = [
      ['registered', aor],
      ['unregistered', aor],
      ['registered', aor],
      ['expired', aor],
    ];
    for (const c of [onA, own, onB]) {
      await c.next((f) => f.type === 'registration.changed' && f.state === 'expired', 10_000);
      const frames = registrationFrames(c);
      expect(frames.map(stateOf)).toEqual(want);
      const seqs = frames.map((f) => f.seq);
      expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);
      expect(new Set(seqs).size).toBe(seqs.length);
    }
    // Expiry is the binding's own time, not when a client happened to look.
    const expired = registrationFrames(own).at(-1) as StreamFrame;
    expect(expired.at).toBe((expired.registration as { expiresAt: number }).expiresAt);
    expect(registrationFrames(other)).toEqual([]);
    expect(registrationFrames(onB).at(0)?.registration).toMatchObject({ node: ts.server.config.instanceId });
    expect(await ts.server.sip!.registrar.locate(login, ts.server.config.organization.defaultDomain)).toEqual(
      [],
    );
  });
});
