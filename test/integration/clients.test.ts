/** Clients over HTTP (spec §Client): CRUD in both forms, Login rules, uniqueness, digest HA1, masking. */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, type Credentials, startTestServer, type TestServer } from '../support/server.js';
import { XMLParser } from '../support/xml.js';

let ts: TestServer;
let owner: { sid: string; creds: Credentials };
const xml = new XMLParser();
const base = () => `${API}/Accounts/${owner.sid}/Clients`;
const as = (opts: Parameters<TestServer['request']>[2] = {}) => ({ auth: owner.creds, ...opts });

beforeAll(async () => {
  ts = await startTestServer({ label: 'clients' });
  const res = await ts.request('POST', `${API}/Accounts.json`, {
    form: { EmailAddress: 'clients@example.test', Password: 'password-123', Role: 'Developer' },
  });
  owner = { sid: res.json.sid, creds: { user: res.json.sid, secret: res.json.auth_token } };
});
afterAll(async () => {
  await ts?.dispose();
});

describe('Clients', () => {
  it('creates with defaults, masks the password and keeps only the digest HA1', async () => {
    const r = await ts.request(
      'POST',
      `${base()}.json`,
      as({ form: { Login: 'alice', Password: 'alice-secret-1' } }),
    );
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({
      login: 'alice',
      friendly_name: 'alice',
      status: 1,
      voice_method: 'POST',
      voice_fallback_method: 'POST',
      voice_url: null,
      voice_application_sid: null,
      account_sid: owner.sid,
      api_version: '2012-04-24',
      password: '********',
      uri: `${base()}/${r.json.sid}.json`,
    });
    expect(r.text).not.toContain('alice-secret-1');
    expect(r.json.sid).toMatch(/^CL[0-9a-f]{32}$/);
    const digest = await ts.server.stores.clients.findForDigest('default.switchboard.local', 'alice');
    expect(digest?.accountStatus).toBe('active');
    expect(digest?.client.ha1).toBe(
      createHash('md5').update('alice:default.switchboard.local:alice-secret-1').digest('hex'),
    );
  });

  it('gets, lists and updates in both forms; a new Password changes the HA1', async () => {
    const c = await ts.request(
      'POST',
      base(),
      as({
        form: {
          Login: 'bob',
          Password: 'bob-secret-1',
          FriendlyName: 'Bob',
          VoiceUrl: 'http://127.0.0.1:9/bob.xml',
          VoiceMethod: 'get',
        },
      }),
    );
    const sid = xml.parse(c.text).ServiceResponse.Client.Sid;
    expect(xml.parse(c.text).ServiceResponse.Client.VoiceMethod).toBe('GET');
    const list = await ts.request('GET', `${base()}.json`, as());
    expect(list.json.map((x: { login: string }) => x.login)).toEqual(
      expect.arrayContaining(['alice', 'bob']),
    );
    const before = (await ts.server.stores.clients.findForDigest('default.switchboard.local', 'bob'))?.client
      .ha1;
    const upd = await ts.request(
      'POST',
      `${base()}/${sid}.json`,
      as({ form: { Password: 'bob-secret-2', Status: '0' } }),
    );
    expect(upd.json.status).toBe(0);
    const after = (await ts.server.stores.clients.findForDigest('default.switchboard.local', 'bob'))?.client
      .ha1;
    expect(after).not.toBe(before);
    const put = await ts.request('PUT', `${base()}/${sid}`, as({ form: { FriendlyName: 'Robert' } }));
    expect(xml.parse(put.text).ServiceResponse.Client.FriendlyName).toBe('Robert');
    expect(
      (await ts.request('GET', `${API}/Accounts/${owner.sid}/Clients.json/${sid}`, as())).json.friendly_name,
    ).toBe('Robert');
  });

  it('VoiceApplicationSid must be an application of the account', async () => {
    const app = await ts.request(
      'POST',
      `${API}/Accounts/${owner.sid}/Applications.json`,
      as({ form: { FriendlyName: 'A' } }),
    );
    const ok = await ts.request(
      'POST',
      `${base()}.json`,
      as({ form: { Login: 'carol', Password: 'carol-secret', VoiceApplicationSid: app.json.sid } }),
    );
    expect(ok.json.voice_application_sid).toBe(app.json.sid);
    const bad = await ts.request(
      'POST',
      `${base()}.json`,
      as({
        form: {
          Login: 'dave',
          Password: 'dave-secret',
          VoiceApplicationSid: 'AP0123456789abcdef0123456789abcdef',
        },
      }),
    );
    expect(bad.status).toBe(400);
  });

  it('a Login is unique within the organization (409), even across accounts', async () => {
    expect(
      (await ts.request('POST', `${base()}.json`, as({ form: { Login: 'erin', Password: 'erin-secret' } })))
        .status,
    ).toBe(201);
    const dup = await ts.request(
      'POST',
      `${base()}.json`,
      as({ form: { Login: 'erin', Password: 'erin-secret' } }),
    );
    expect(dup.status).toBe(409);
    const other = await ts.request('POST', `${API}/Accounts/${ts.admin.sid}/Clients.json`, {
      form: { Login: 'erin', Password: 'erin-secret' },
    });
    expect(other.status).toBe(409);
  });

  it('refuses bad input with 400 naming the parameter', async () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ Password: 'password-1' }, /Login/],
      [{ Login: 'has space', Password: 'password-1' }, /Login/],
      [{ Login: 'x@y', Password: 'password-1' }, /Login/],
      [{ Login: 'frank' }, /Password/],
      [{ Login: 'frank', Password: 'short' }, /Password/],
      [{ Login: 'frank', Password: 'password-1', Status: '2' }, /Status/],
      [{ Login: 'frank', Password: 'password-1', VoiceMethod: 'PUT' }, /VoiceMethod/],
      [{ Login: 'frank', Password: 'password-1', VoiceUrl: 'not a url' }, /VoiceUrl/],
      [{ Login: 'frank', Password: 'password-1', FriendlyName: 'x'.repeat(65) }, /FriendlyName/],
    ];
    for (const [form, re] of cases) {
      const r = await ts.request('POST', `${base()}.json`, as({ form }));
      expect(r.status, JSON.stringify(form)).toBe(400);
      expect(r.json.message).toMatch(re);
    }
    // Escaped characters are valid userinfo.
    expect(
      (
        await ts.request(
          'POST',
          `${base()}.json`,
          as({ form: { Login: 'gina%40home;x=1', Password: 'password-1' } }),
        )
      ).status,
    ).toBe(201);
  });

  it('DELETE answers 204 and the client is gone; closing the account deletes its clients', async () => {
    const c = await ts.request(
      'POST',
      `${base()}.json`,
      as({ form: { Login: 'henry', Password: 'henry-secret' } }),
    );
    expect((await ts.request('DELETE', `${base()}/${c.json.sid}.json`, as())).status).toBe(204);
    expect((await ts.request('GET', `${base()}/${c.json.sid}.json`, as())).status).toBe(404);

    const acct = await ts.request('POST', `${API}/Accounts.json`, {
      form: { EmailAddress: 'closing@example.test', Password: 'password-123' },
    });
    const creds = { user: acct.json.sid, secret: acct.json.auth_token };
    await ts.request('POST', `${API}/Accounts/${acct.json.sid}/Clients.json`, {
      auth: creds,
      form: { Login: 'ivy', Password: 'ivy-secret-1' },
    });
    expect(await ts.server.stores.clients.findForDigest('default.switchboard.local', 'ivy')).not.toBeNull();
    await ts.request('POST', `${API}/Accounts/${acct.json.sid}.json`, { form: { Status: 'closed' } });
    expect(await ts.server.stores.clients.findForDigest('default.switchboard.local', 'ivy')).toBeNull();
  });
});
