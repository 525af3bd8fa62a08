/** Gateways over HTTP under both version segments; Super Admin only; changes are announced to watchers. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayChange } from '../../src/store/gateway-store.js';
import { API, startTestServer, type TestServer } from '../support/server.js';
import { XMLParser } from '../support/xml.js';

let ts: TestServer;
const base = (v = '2012-04-24') => `/${v}/Accounts/${ts.admin.sid}/Management/Gateways`;

beforeAll(async () => {
  ts = await startTestServer({ label: 'gateways' });
});
afterAll(async () => {
  await ts?.dispose();
});

describe('Gateways', () => {
  it('CRUD in JSON and XML, with the password never echoed, and watchers told of each change', async () => {
    const changes: GatewayChange[] = [];
    const stop = ts.server.stores.gateways.watch((c) => changes.push(c));
    const created = await ts.request('POST', `${base()}.json`, {
      form: {
        FriendlyName: 'Carrier',
        UserName: 'acct1',
        Password: 'gw-secret',
        Proxy: '127.0.0.2:5060',
        Register: 'true',
        TTL: '600',
      },
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      friendly_name: 'Carrier',
      user_name: 'acct1',
      password: '********',
      proxy: '127.0.0.2:5060',
      register: true,
      ttl: 600,
    });
    expect(created.text).not.toContain('gw-secret');
    const sid = created.json.sid;
    expect(sid).toMatch(/^GW[0-9a-f]{32}$/);
    const old = await ts.request('GET', `${base('2010-04-01')}/${sid}.json`);
    expect(old.json.sid).toBe(sid);
    const upd = await ts.request('PUT', `${base()}/${sid}`, { form: { Register: 'false', TTL: '3600' } });
    expect(new XMLParser().parse(upd.text).ServiceResponse.Gateway).toMatchObject({
      Register: 'false',
      TTL: 3600,
    });
    const list = await ts.request('GET', `${base('2010-04-01')}.json`);
    expect(list.json.map((g: { sid: string }) => g.sid)).toEqual([sid]);
    expect((await ts.request('DELETE', `${base()}/${sid}.json`)).status).toBe(204);
    expect((await ts.request('GET', `${base()}/${sid}.json`)).status).toBe(404);
    for (let i = 0; i < 50 && changes.length < 3; i++) await new Promise((r) => setTimeout(r, 20));
    stop();
    expect(changes.map((c) => c.kind)).toEqual(['upsert', 'upsert', 'delete']);
    const first = changes[0]!;
    if (first.kind === 'upsert') expect(first.gateway.password).toBe('gw-secret'); // the SIP layer needs it
  });

  it('only the Super Admin manages gateways', async () => {
    const a = await ts.request('POST', `${API}/Accounts.json`, {
      form: { EmailAddress: 'gw-admin@example.test', Password: 'password-123', Role: 'Administrator' },
    });
    const creds = { user: a.json.sid, secret: a.json.auth_token };
    const r = await ts.request('POST', `/2012-04-24/Accounts/${a.json.sid}/Management/Gateways.json`, {
      auth: creds,
      form: { Proxy: '127.0.0.2' },
    });
    expect(r.status).toBe(403);
  });

  it('refuses bad input', async () => {
    for (const [form, re] of [
      [{ FriendlyName: 'x' }, /Proxy/],
      [{ Proxy: 'not a host!' }, /Proxy/],
      [{ Proxy: '127.0.0.2', TTL: '5' }, /TTL/],
      [{ Proxy: '127.0.0.2', Register: 'sometimes' }, /Register/],
    ] as const) {
      const r = await ts.request('POST', `${base()}.json`, { form });
      expect(r.status, JSON.stringify(form)).toBe(400);
      expect(r.json.message).toMatch(re);
    }
  });
});
