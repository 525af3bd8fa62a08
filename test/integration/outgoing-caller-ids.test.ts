/** OutgoingCallerIds over HTTP, and CALLER_ID_POLICY=verified on REST calls. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, type Credentials, startTestServer, type TestServer } from '../support/server.js';
import { XMLParser } from '../support/xml.js';

let ts: TestServer;
let owner: { sid: string; creds: Credentials };
let other: { sid: string; creds: Credentials };
const base = (sid = owner.sid) => `${API}/Accounts/${sid}/OutgoingCallerIds`;
const as = (form?: Record<string, string>, creds = owner.creds) => ({
  auth: creds,
  ...(form ? { form } : {}),
});

async function account(email: string) {
  const res = await ts.request('POST', `${API}/Accounts.json`, {
    form: { EmailAddress: email, Password: 'password-123' },
  });
  return { sid: res.json.sid as string, creds: { user: res.json.sid, secret: res.json.auth_token } };
}

beforeAll(async () => {
  ts = await startTestServer({ label: 'callerids', env: { CALLER_ID_POLICY: 'verified' } });
  owner = await account('callerids@example.test');
  other = await account('callerids-other@example.test');
});
afterAll(async () => {
  await ts?.dispose();
});

describe('OutgoingCallerIds', () => {
  it('creates, lists, renames and deletes a caller id', async () => {
    const created = await ts.request('POST', `${base()}.json`, as({ PhoneNumber: '+14155550142' }));
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`${ts.url}${base()}/${created.json.sid}`);
    expect(created.json).toMatchObject({
      sid: expect.stringMatching(/^PN[0-9a-f]{32}$/),
      account_sid: owner.sid,
      friendly_name: '(415) 555-0142',
      phone_number: '+14155550142',
      uri: `${base()}/${created.json.sid}.json`,
    });
    const again = await ts.request('POST', `${base()}.json`, as({ PhoneNumber: '+14155550142' }));
    expect(again.status).toBe(409);
    expect(again.json.code).toBe(21450);
    const renamed = await ts.request(
      'POST',
      `${base()}/${created.json.sid}.json`,
      as({ FriendlyName: 'Office' }),
    );
    expect(renamed.json.friendly_name).toBe('Office');
    const listed = await ts.request('GET', `${base()}.json?PhoneNumber=%2B14155550142`, as());
    expect(listed.json.map((c: { friendly_name: string }) => c.friendly_name)).toEqual(['Office']);
    const xml = await ts.request('GET', `${base()}/${created.json.sid}`, as());
    expect(new XMLParser().parse(xml.text).ServiceResponse.OutgoingCallerId.FriendlyName).toBe('Office');
    const deleted = await ts.request('DELETE', `${base()}/${created.json.sid}`, as());
    expect(deleted.status).toBe(204);
    expect((await ts.request('GET', `${base()}/${created.json.sid}.json`, as())).status).toBe(404);
  });

  it('refuses bad numbers, and keeps tenants apart', async () => {
    const bad = await ts.request('POST', `${base()}.json`, as({ PhoneNumber: '4155550142' }));
    expect(bad.status).toBe(400);
    const missing = await ts.request('POST', `${base()}.json`, as({}));
    expect(missing.json.code).toBe(21101);
    const mine = await ts.request('POST', `${base()}.json`, as({ PhoneNumber: '+14155550143' }));
    const theirs = `${base(other.sid)}/${mine.json.sid}.json`;
    expect((await ts.request('GET', theirs, as(undefined, other.creds))).status).toBe(404);
    expect(
      (await ts.request('GET', `${base()}/${mine.json.sid}.json`, as(undefined, other.creds))).status,
    ).toBe(404);
    expect((await ts.request('GET', `${base(other.sid)}.json`, as(undefined, other.creds))).json).toEqual([]);
  });
});

describe('CALLER_ID_POLICY=verified', () => {
  const call = (from: string) =>
    ts.request(
      'POST',
      `${API}/Accounts/${owner.sid}/Calls.json`,
      // Nothing listens at 127.0.0.9: the call is accepted, then fails, which is all this needs.
      as({ From: from, To: 'sip:nobody@127.0.0.9:5060', Url: 'http://127.0.0.1:9/a.xml' }),
    );

  it('takes a From the account owns or lists as a caller id, or a client; refuses others', async () => {
    const refused = await call('+14155550160');
    expect(refused.status).toBe(400);
    expect(refused.json.code).toBe(21210);
    await ts.request('POST', `${base()}.json`, as({ PhoneNumber: '+14155550160' }));
    expect((await call('+14155550160')).status).toBe(201);
    const bought = await ts.request(
      'POST',
      `${API}/Accounts/${owner.sid}/IncomingPhoneNumbers.json`,
      as({ PhoneNumber: '+14155550161' }),
    );
    expect(bought.status).toBe(201);
    expect((await call('+14155550161')).status).toBe(201);
    expect((await call('client:alice')).status).toBe(201);
    // Another account's caller id is not this account's.
    await ts.request('POST', `${base(other.sid)}.json`, as({ PhoneNumber: '+14155550162' }, other.creds));
    expect((await call('+14155550162')).status).toBe(400);
  });
});
