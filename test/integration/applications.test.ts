/** Applications over HTTP (spec §Application): CRUD in both forms, the naming quirk, ownership, bad input. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, type Credentials, startTestServer, type TestServer } from '../support/server.js';
import { XMLParser } from '../support/xml.js';

let ts: TestServer;
let owner: { sid: string; creds: Credentials };
const xml = new XMLParser();
const base = () => `${API}/Accounts/${owner.sid}/Applications`;

beforeAll(async () => {
  ts = await startTestServer({ label: 'apps' });
  const res = await ts.request('POST', `${API}/Accounts.json`, {
    form: { EmailAddress: 'apps@example.test', Password: 'password-123', Role: 'Developer' },
  });
  owner = { sid: res.json.sid, creds: { user: res.json.sid, secret: res.json.auth_token } };
});
afterAll(async () => {
  await ts?.dispose();
});

const as = (opts: Parameters<TestServer['request']>[2] = {}) => ({ auth: owner.creds, ...opts });

describe('Applications', () => {
  it('creates with HasVoiceCallerIdLookup and shows VoiceCallerIdLookup; updates with VoiceCallerIdLookup', async () => {
    const created = await ts.request(
      'POST',
      `${base()}.json`,
      as({
        form: {
          FriendlyName: 'IVR',
          HasVoiceCallerIdLookup: 'true',
          RcmlUrl: 'http://127.0.0.1:9/ivr.xml',
          Kind: 'voice',
        },
      }),
    );
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      friendly_name: 'IVR',
      account_sid: owner.sid,
      api_version: '2012-04-24',
      voice_caller_id_lookup: true,
      rcml_url: 'http://127.0.0.1:9/ivr.xml',
      kind: 'voice',
      uri: `${base()}/${created.json.sid}.json`,
    });
    expect(created.json.sid).toMatch(/^AP[0-9a-f]{32}$/);
    const upd = await ts.request(
      'POST',
      `${base()}/${created.json.sid}.json`,
      as({ form: { VoiceCallerIdLookup: 'false', Kind: 'sms' } }),
    );
    expect(upd.json).toMatchObject({ voice_caller_id_lookup: false, kind: 'sms', friendly_name: 'IVR' });
    const put = await ts.request(
      'PUT',
      `${base()}/${created.json.sid}`,
      as({ form: { FriendlyName: 'Renamed' } }),
    );
    const doc = xml.parse(put.text).ServiceResponse.Application;
    expect(doc).toMatchObject({ FriendlyName: 'Renamed', VoiceCallerIdLookup: 'false', Kind: 'sms' });
  });

  it('lists in JSON (plain array) and XML, gets in both forms', async () => {
    const a = await ts.request('POST', `${base()}`, as({ form: { FriendlyName: 'Second', Kind: 'ussd' } }));
    const sid = xml.parse(a.text).ServiceResponse.Application.Sid;
    const list = await ts.request('GET', `${base()}.json`, as());
    expect(Array.isArray(list.json)).toBe(true);
    expect(list.json.map((x: { sid: string }) => x.sid)).toContain(sid);
    const listXml = xml.parse((await ts.request('GET', base(), as())).text).ServiceResponse.Applications
      .Application;
    expect([listXml].flat().map((x: { Sid: string }) => x.Sid)).toContain(sid);
    expect((await ts.request('GET', `${base()}.json/${sid}`, as())).json.kind).toBe('ussd');
  });

  it('DELETE answers 204 with an empty body and the application is gone', async () => {
    const a = await ts.request('POST', `${base()}.json`, as({ form: { FriendlyName: 'Doomed' } }));
    const del = await ts.request('DELETE', `${base()}/${a.json.sid}.json`, as());
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await ts.request('GET', `${base()}/${a.json.sid}.json`, as())).status).toBe(404);
    const list = await ts.request('GET', `${base()}.json`, as());
    expect(list.json.map((x: { sid: string }) => x.sid)).not.toContain(a.json.sid);
    expect((await ts.request('DELETE', `${base()}/${a.json.sid}.json`, as())).status).toBe(404);
  });

  it('PUT and DELETE on the list are 405', async () => {
    for (const m of ['PUT', 'DELETE']) {
      const r = await ts.request(m, `${base()}.json`, as());
      expect(r.status).toBe(405);
      expect(r.headers.get('allow')).toBe('GET, POST, HEAD');
    }
  });

  it('only the owning account reaches its applications, not even its parent administrator', async () => {
    const a = await ts.request('POST', `${base()}.json`, as({ form: { FriendlyName: 'Private' } }));
    for (const method of ['GET', 'POST', 'DELETE']) {
      const r = await ts.request(method, `${base()}/${a.json.sid}.json`, {
        auth: ts.admin,
        form: method === 'POST' ? { FriendlyName: 'x' } : undefined,
      });
      expect(r.status, method).toBe(404);
    }
    expect((await ts.request('GET', `${base()}.json`, { auth: ts.admin })).status).toBe(404);
    expect(
      (await ts.request('POST', `${base()}.json`, { auth: ts.admin, form: { FriendlyName: 'x' } })).status,
    ).toBe(404);
  });

  it("Twilio's VoiceUrl/SmsUrl are refused naming RcmlUrl, on create and on update, never ignored", async () => {
    const before = (await ts.request('GET', `${base()}.json`, as())).json.length;
    const create = await ts.request(
      'POST',
      `${base()}.json`,
      as({ form: { FriendlyName: 'Twilio habit', VoiceUrl: 'http://127.0.0.1:9/v.xml' } }),
    );
    expect(create.status).toBe(400);
    expect(create.json.code).toBe(21100);
    expect(create.json.message).toMatch(
      /^VoiceUrl is not an Applications parameter .*send RcmlUrl with Kind=voice/,
    );
    expect((await ts.request('GET', `${base()}.json`, as())).json).toHaveLength(before);

    const made = await ts.request(
      'POST',
      `${base()}.json`,
      as({ form: { FriendlyName: 'Texts', RcmlUrl: 'http://127.0.0.1:9/a.xml', Kind: 'sms' } }),
    );
    expect(made.status).toBe(201);
    const update = await ts.request(
      'POST',
      `${base()}/${made.json.sid}.json`,
      as({ form: { SmsUrl: 'http://127.0.0.1:9/b.xml' } }),
    );
    expect(update.status).toBe(400);
    expect(update.json.message).toMatch(/^SmsUrl .*send RcmlUrl with Kind=sms/);
    const after = await ts.request('GET', `${base()}/${made.json.sid}.json`, as());
    expect(after.json.rcml_url).toBe('http://127.0.0.1:9/a.xml');
  });

  it('refuses bad input with 400 naming the parameter', async () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{}, /FriendlyName/],
      [{ FriendlyName: 'x'.repeat(65) }, /FriendlyName/],
      [{ FriendlyName: 'k', Kind: 'fax' }, /Kind/],
      [{ FriendlyName: 'u', RcmlUrl: 'ftp://example.test/x' }, /RcmlUrl/],
      [{ FriendlyName: 'b', HasVoiceCallerIdLookup: 'maybe' }, /HasVoiceCallerIdLookup/],
    ];
    for (const [form, re] of cases) {
      const r = await ts.request('POST', `${base()}.json`, as({ form }));
      expect(r.status, JSON.stringify(form)).toBe(400);
      expect(r.json.message).toMatch(re);
    }
  });
});
