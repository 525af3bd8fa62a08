/**
 * Every URI an account representation lists answers with the account's own credentials, on the
 * native surface (JSON and XML) and on the Twilio 2010-04-01 surface.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, type Credentials, startTestServer, type TestServer } from '../../support/server.js';
import { XMLParser } from '../../support/xml.js';

let ts: TestServer;
let owner: { sid: string; creds: Credentials };

beforeAll(async () => {
  ts = await startTestServer({ label: 'subresources' });
  const r = await ts.request('POST', `${API}/Accounts.json`, {
    form: { EmailAddress: 'subres@example.test', Password: 'password-123', Role: 'Developer' },
  });
  owner = { sid: r.json.sid, creds: { user: r.json.sid, secret: r.json.auth_token } };
});
afterAll(async () => {
  await ts?.dispose();
});

async function followAll(uris: Record<string, string>) {
  const out: Record<string, number> = {};
  for (const [name, uri] of Object.entries(uris)) {
    out[name] = (await ts.request('GET', uri, { auth: owner.creds })).status;
  }
  return out;
}

describe('Account SubresourceUris', () => {
  it('JSON: every listed URI answers 200, and the unimplemented lists are not listed', async () => {
    const acct = await ts.request('GET', `${API}/Accounts/${owner.sid}.json`, { auth: owner.creds });
    expect(acct.status).toBe(200);
    const uris = acct.json.subresource_uris as Record<string, string>;
    expect(Object.keys(uris).sort()).toEqual([
      'applications',
      'available_phone_numbers',
      'calls',
      'clients',
      'incoming_phone_numbers',
      'notifications',
      'outgoing_caller_ids',
      'recordings',
      'sms_messages',
    ]);
    const statuses = await followAll(uris);
    for (const [name, status] of Object.entries(statuses))
      expect({ name, status }).toEqual({ name, status: 200 });
  });

  it('XML: every listed URI answers 200', async () => {
    const acct = await ts.request('GET', `${API}/Accounts/${owner.sid}`, { auth: owner.creds });
    const doc = new XMLParser().parse(acct.text);
    const uris = doc.ServiceResponse.Account.SubresourceUris as Record<string, string>;
    expect(Object.keys(uris)).toHaveLength(9);
    const statuses = await followAll(uris);
    for (const [name, status] of Object.entries(statuses))
      expect({ name, status }).toEqual({ name, status: 200 });
  });

  it('Twilio surface: every subresource_uri answers 200 with a page', async () => {
    const acct = await ts.request('GET', `/2010-04-01/Accounts/${owner.sid}.json`, { auth: owner.creds });
    expect(acct.status).toBe(200);
    expect(acct.json.uri).toBe(`/2010-04-01/Accounts/${owner.sid}.json`);
    const uris = acct.json.subresource_uris as Record<string, string>;
    expect(Object.keys(uris).sort()).toEqual([
      'applications',
      'calls',
      'incoming_phone_numbers',
      'messages',
      'notifications',
      'recordings',
    ]);
    for (const [name, uri] of Object.entries(uris)) {
      const r = await ts.request('GET', uri, { auth: owner.creds });
      expect({ name, status: r.status }).toEqual({ name, status: 200 });
      expect(r.json[name]).toEqual([]);
      expect(r.json).toMatchObject({ page: 0, next_page_uri: null, previous_page_uri: null });
    }
  });
});
