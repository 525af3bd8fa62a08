/**
 * A real SIP phone (baresip) registers with digest over UDP to the service's own address (so it
 * belongs to the default organization's domain), stays registered across its refreshes, and
 * unregisters when it quits.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Baresip } from '../../support/baresip.js';
import { API, startTestServer, type TestServer } from '../../support/server.js';
import { until } from '../../support/until.js';

let ts: TestServer;
let phone: Baresip | null = null;

beforeAll(async () => {
  ts = await startTestServer({ label: 'baresip', env: { SIP_REGISTRAR_MIN_EXPIRES: '1' } });
});
afterAll(async () => {
  await phone?.stop();
  await ts?.dispose();
});

describe('baresip', () => {
  it('registers, stays registered across refreshes, and unregisters on quit', async () => {
    const acct = await ts.request('POST', `${API}/Accounts.json`, {
      auth: ts.admin,
      form: { EmailAddress: 'phone@example.test', Password: 'password-123', Role: 'Developer' },
    });
    const creds = { user: acct.json.sid, secret: acct.json.auth_token };
    const client = await ts.request('POST', `${API}/Accounts/${acct.json.sid}/Clients.json`, {
      auth: creds,
      form: { Login: 'bob', Password: 'bob-secret-1' },
    });
    expect(client.status).toBe(201);
    const domain = ts.server.config.organization.defaultDomain;
    const registrar = ts.server.sip!.registrar;

    phone = new Baresip({
      aor: `sip:bob@127.0.0.1:${ts.server.sip!.stack.port};transport=udp`,
      password: 'bob-secret-1',
      regint: 3,
    });
    await phone.start();
    const first = await until(
      () => registrar.locate('bob', domain),
      (b) => b.length === 1,
      8000,
    );
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({
      accountSid: acct.json.sid,
      flow: { protocol: 'UDP', address: '127.0.0.3' },
    });
    const firstExpiry = first[0]!.expiresAt;
    expect(firstExpiry - Date.now()).toBeLessThanOrEqual(3000);

    // Past the first binding's expiry the phone is still registered: it refreshed in time.
    await until(
      async () => Date.now(),
      (now) => now > firstExpiry + 500,
      6000,
    );
    const later = await registrar.locate('bob', domain);
    expect(later).toHaveLength(1);
    expect(later[0]!.expiresAt).toBeGreaterThan(firstExpiry);
    expect(await registrar.countRegistered()).toBeGreaterThanOrEqual(1);

    await phone.stop();
    phone = null;
    const after = await until(
      () => registrar.locate('bob', domain),
      (b) => b.length === 0,
      3000,
    );
    expect(after).toHaveLength(0);
  });
});
