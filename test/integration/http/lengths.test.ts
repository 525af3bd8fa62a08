/**
 * Documented maximum lengths of form members (docs/errors.md "Length limits"): one check for every
 * form body, 400 naming the member above the limit; values at the limit pass.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MEMBER_MAX_LENGTH } from '../../../src/http/validate.js';
import { API, type ApiResponse, startTestServer, type TestServer } from '../../support/server.js';

let ts: TestServer;
let gateways: string;

beforeAll(async () => {
  ts = await startTestServer({ label: 'lengths' });
  gateways = `${API}/Accounts/${ts.admin.sid}/Management/Gateways.json`;
});
afterAll(async () => {
  await ts?.dispose();
});

function expectTooLong(res: ApiResponse, member: string) {
  expect(res.status, res.text).toBe(400);
  expect(res.json).toMatchObject({ code: 21100, status: 400 });
  expect(res.json.message).toContain(member);
}

describe('length limits', () => {
  it('Gateway Proxy, UserName and Password above their limits: 400 naming the member', async () => {
    const host = `${'a'.repeat(300)}.example.test`;
    expectTooLong(await ts.request('POST', gateways, { form: { Proxy: host } }), 'Proxy');
    expectTooLong(
      await ts.request('POST', gateways, {
        form: { Proxy: 'gw.example.test', UserName: 'u'.repeat(129) },
      }),
      'UserName',
    );
    expectTooLong(
      await ts.request('POST', gateways, {
        form: { Proxy: 'gw.example.test', Password: 'p'.repeat(129) },
      }),
      'Password',
    );
    // At the limit exactly: a valid SIP address (a host name itself stops at 255 characters).
    const atLimit = `sip:${'a'.repeat((MEMBER_MAX_LENGTH.Proxy as number) - 'sip:@gw.example.test'.length)}@gw.example.test`;
    expect(atLimit).toHaveLength(MEMBER_MAX_LENGTH.Proxy as number);
    const ok = await ts.request('POST', gateways, {
      form: {
        Proxy: atLimit,
        UserName: 'u'.repeat(128),
      },
    });
    expect(ok.status, ok.text).toBe(201);
  });

  it('FriendlyName-like members on every form endpoint', async () => {
    const long = 'n'.repeat(65);
    const cases: Array<[string, string, Record<string, string>]> = [
      ['POST', `${API}/Accounts/${ts.admin.sid}.json`, { FriendlyName: long }],
      ['POST', `${API}/Accounts/${ts.admin.sid}/Applications.json`, { FriendlyName: long }],
      [
        'POST',
        `${API}/Accounts/${ts.admin.sid}/Clients.json`,
        { Login: 'l'.repeat(129), Password: 'password-1' },
      ],
      ['POST', `${API}/Organizations.json`, { DomainName: `${'d'.repeat(250)}.test` }],
    ];
    for (const [method, path, form] of cases) {
      const member = Object.keys(form)[0] as string;
      expectTooLong(await ts.request(method, path, { form }), member);
    }
  });

  it('URLs above 2,048, any other member above 1,024, a 1 MB value, an overlong member name', async () => {
    const apps = `${API}/Accounts/${ts.admin.sid}/Applications.json`;
    expectTooLong(
      await ts.request('POST', apps, {
        form: { FriendlyName: 'a', VoiceUrl: `https://example.test/${'x'.repeat(2048)}` },
      }),
      'VoiceUrl',
    );
    expectTooLong(
      await ts.request('POST', apps, { form: { FriendlyName: 'a', Whatever: 'w'.repeat(1025) } }),
      'Whatever',
    );
    const mb = await ts.request('POST', `${API}/Accounts/${ts.admin.sid}.json`, {
      form: { FriendlyName: 'x'.repeat(1024 * 1024) },
    });
    expect([400, 413]).toContain(mb.status);
    expect(mb.json.code === 21100 || mb.json.code === 20413).toBe(true);
    expectTooLong(
      await ts.request('POST', apps, { form: { ['N'.repeat(65)]: 'v', FriendlyName: 'a' } }),
      'longer than 64',
    );
  });
});
