/**
 * Gateway registration against a sipp registrar: the service REGISTERs itself to
 * the gateway's Proxy with digest (401 → 200), asks for the gateway's TTL, refreshes before the
 * granted expiry, retries after the registrar fails once (503), shows its live state on the
 * Gateway resource, and un-REGISTERs when the gateway is deleted — all without a restart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../support/server.js';
import { startSipp } from '../../support/sipp.js';
import { until } from '../../support/until.js';

let ts: TestServer;
const base = () => `/2012-04-24/Accounts/${ts.admin.sid}/Management/Gateways`;

beforeAll(async () => {
  ts = await startTestServer({ label: 'gwreg' });
});
afterAll(async () => {
  await ts?.dispose();
});

describe('gateway registration', () => {
  it('registers with digest, refreshes before expiry, recovers from a registrar failure, unregisters on delete', async () => {
    const registrar = await startSipp({
      scenario: 'uas-registrar-expect-refresh-retry-unregister.xml',
      transport: 'u1',
      timeoutSeconds: 40,
    });
    const created = await ts.request('POST', `${base()}.json`, {
      auth: ts.admin,
      form: {
        FriendlyName: 'Carrier',
        UserName: 'gw-user',
        Password: 'gw-secret-1',
        Proxy: `127.0.0.2:${registrar.localPort}`,
        Register: 'true',
        TTL: '600',
      },
    });
    expect(created.status).toBe(201);
    const sid = created.json.sid as string;
    const get = async () => (await ts.request('GET', `${base()}/${sid}.json`, { auth: ts.admin })).json;

    // First registration: 401 → 200 with 4 s granted.
    const first = await until(get, (g) => g.registration_state === 'registered', 5000);
    expect(first).toMatchObject({ registration_state: 'registered', registration_status_code: 200 });
    const firstExpiry = Date.parse(first.registration_expires);
    expect(firstExpiry - Date.now()).toBeLessThanOrEqual(5000);

    // The refresh (≈3.2 s) meets a 503: the actor retries with backoff.
    const retrying = await until(get, (g) => g.registration_state === 'retrying', 8000);
    expect(retrying).toMatchObject({ registration_state: 'retrying', registration_status_code: 503 });
    // Re-registered within the first backoff step, before the first binding ran out, granted 60 s.
    const again = await until(
      get,
      (g) =>
        g.registration_state === 'registered' && Date.parse(g.registration_expires) > firstExpiry + 30_000,
      5000,
    );
    expect(again).toMatchObject({ registration_state: 'registered', registration_status_code: 200 });
    expect(ts.server.sip!.gateways.status(sid)).toMatchObject({ failures: 0, lastStatus: 200 });

    // Deleting the gateway un-REGISTERs (Expires: 0) and ends the actor.
    expect((await ts.request('DELETE', `${base()}/${sid}.json`, { auth: ts.admin })).status).toBe(204);
    const result = await registrar.done;
    expect(result.errors).toBe('');
    expect(result.code).toBe(0);
    const gone = await until(
      async () => ts.server.sip!.gateways.status(sid),
      (s) => s === null,
      3000,
    );
    expect(gone).toBeNull();
  });

  it('a gateway with an unreachable registrar keeps retrying with growing delays and shows why', async () => {
    const created = await ts.request('POST', `${base()}.json`, {
      auth: ts.admin,
      form: { UserName: 'u', Password: 'p', Proxy: '127.0.0.9:9;transport=tcp', Register: 'true', TTL: '60' },
    });
    expect(created.status).toBe(201);
    const sid = created.json.sid as string;
    const status = await until(
      async () => ts.server.sip!.gateways.status(sid),
      (s) => (s?.failures ?? 0) >= 2,
      6000,
    );
    expect(status).toMatchObject({ state: 'retrying', lastStatus: 503 });
    // Register=false stops the registration without deleting the gateway.
    const off = await ts.request('POST', `${base()}/${sid}.json`, {
      auth: ts.admin,
      form: { Register: 'false' },
    });
    expect(off.json).toMatchObject({ register: false, registration_state: null });
    const gone = await until(
      async () => ts.server.sip!.gateways.status(sid),
      (s) => s === null,
      3000,
    );
    expect(gone).toBeNull();
  });
});
