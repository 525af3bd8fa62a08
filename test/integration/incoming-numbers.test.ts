/** Incoming phone numbers over HTTP: purchase, factories, filters, update, transfer, release, bad input. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, type Credentials, startTestServer, type TestServer } from '../support/server.js';
import { XMLParser } from '../support/xml.js';

let ts: TestServer;
let owner: { sid: string; creds: Credentials };
let other: { sid: string; creds: Credentials };
const xml = new XMLParser();
const base = () => `${API}/Accounts/${owner.sid}/IncomingPhoneNumbers`;
const as = (opts: Parameters<TestServer['request']>[2] = {}) => ({ auth: owner.creds, ...opts });

async function account(email: string) {
  const res = await ts.request('POST', `${API}/Accounts.json`, {
    form: { EmailAddress: email, Password: 'password-123' },
  });
  return { sid: res.json.sid as string, creds: { user: res.json.sid, secret: res.json.auth_token } };
}

beforeAll(async () => {
  ts = await startTestServer({
    label: 'numbers',
    env: { NUMBER_POOL: '+14155550100-+14155550199,+18005550100-+18005550199,+15551000000-+15551000099' },
  });
  owner = await account('numbers@example.test');
  other = await account('numbers-other@example.test');
});
afterAll(async () => {
  await ts?.dispose();
});

describe('purchase', () => {
  it('buys a number by PhoneNumber with defaults', async () => {
    const r = await ts.request(
      'POST',
      `${base()}.json`,
      as({ form: { PhoneNumber: '+14155550123', VoiceUrl: 'http://127.0.0.1:9/v.xml' } }),
    );
    expect(r.status).toBe(201);
    expect(r.json.sid).toMatch(/^PN[0-9a-f]{32}$/);
    expect(r.json.sid).toHaveLength(34);
    expect(r.json).toMatchObject({
      phone_number: '+14155550123',
      friendly_name: '(415) 555-0123',
      account_sid: owner.sid,
      api_version: '2012-04-24',
      voice_url: 'http://127.0.0.1:9/v.xml',
      voice_method: 'POST',
      sms_method: 'POST',
      voice_caller_id_lookup: false,
      capabilities: { voice_capable: true, sms_capable: true, mms_capable: false, fax_capable: false },
    });
    expect(r.json.date_created).toMatch(/\+0000$/);
  });

  it('buys a random number of an area code; AreaCode wins over PhoneNumber', async () => {
    const r = await ts.request(
      'POST',
      base(),
      as({ form: { AreaCode: '555', PhoneNumber: '+14155550150' } }),
    );
    expect(r.status).toBe(201);
    expect(xml.parse(r.text).ServiceResponse.IncomingPhoneNumber.PhoneNumber).toMatch(/^\+1555100\d{4}$/);
  });

  it('a number is owned by one account platform-wide; no match → 400 with code 21452', async () => {
    await ts.request('POST', `${base()}.json`, as({ form: { PhoneNumber: '+14155550124' } }));
    const taken = await ts.request('POST', `${API}/Accounts/${other.sid}/IncomingPhoneNumbers.json`, {
      auth: other.creds,
      form: { PhoneNumber: '+14155550124' },
    });
    expect(taken.status).toBe(400);
    expect(taken.json.code).toBe(21452);
    const outside = await ts.request('POST', `${base()}.json`, as({ form: { PhoneNumber: '+14155559999' } }));
    expect(outside.status).toBe(400);
    expect(outside.json.code).toBe(21452);
    const noArea = await ts.request('POST', `${base()}.json`, as({ form: { AreaCode: '303' } }));
    expect(noArea.json.code).toBe(21452);
  });

  it("buying a number the account already owns says so (409, 21453); another tenant's stays a neutral 21452", async () => {
    const first = await ts.request('POST', `${base()}.json`, as({ form: { PhoneNumber: '+14155550125' } }));
    expect(first.status).toBe(201);
    const again = await ts.request('POST', `${base()}.json`, as({ form: { PhoneNumber: '+14155550125' } }));
    expect(again.status).toBe(409);
    expect(again.json.code).toBe(21453);
    expect(again.json.message).toMatch(/\+14155550125 is already an incoming phone number of this account/);
    const theirs = await ts.request('POST', `${API}/Accounts/${other.sid}/IncomingPhoneNumbers.json`, {
      auth: other.creds,
      form: { PhoneNumber: '+14155550125' },
    });
    expect(theirs.status).toBe(400);
    expect(theirs.json.code).toBe(21452);
    expect(theirs.json.message).not.toMatch(/owned|already|account/i);
  });

  it("PhoneNumber with its '+' decoded as a space is refused naming %2B; %2B is accepted", async () => {
    const spaced = await ts.request('POST', `${base()}.json`, as({ form: 'PhoneNumber=+14155550126' }));
    expect(spaced.status).toBe(400);
    expect(spaced.json.code).toBe(21100);
    expect(spaced.json.message).toBe(
      "PhoneNumber ' 14155550126' is not a valid E.164 number; URL-encode '+' as %2B (curl --data-urlencode)",
    );
    const encoded = await ts.request('POST', `${base()}.json`, as({ form: 'PhoneNumber=%2B14155550126' }));
    expect(encoded.status).toBe(201);
    expect(encoded.json.phone_number).toBe('+14155550126');
  });

  it('factories list their type only and refuse AreaCode', async () => {
    const tf = await ts.request(
      'POST',
      `${base()}/TollFree.json`,
      as({ form: { PhoneNumber: '+18005550111' } }),
    );
    expect(tf.status).toBe(201);
    const mobile = await ts.request(
      'POST',
      `${base()}/Mobile.json`,
      as({ form: { PhoneNumber: '+14155550160' } }),
    );
    expect(mobile.status).toBe(201);
    const tfList = await ts.request('GET', `${base()}/TollFree.json`, as());
    expect(tfList.json.map((n: { phone_number: string }) => n.phone_number)).toEqual(['+18005550111']);
    const mobileList = await ts.request('GET', `${base()}/Mobile.json`, as());
    expect(mobileList.json.map((n: { phone_number: string }) => n.phone_number)).toEqual(['+14155550160']);
    const local = await ts.request('GET', `${base()}/Local.json`, as());
    expect(local.json.map((n: { phone_number: string }) => n.phone_number)).not.toContain('+18005550111');
    const area = await ts.request('POST', `${base()}/Local.json`, as({ form: { AreaCode: '415' } }));
    expect(area.status).toBe(400);
    expect(area.json.message).toMatch(/AreaCode/);
    for (const m of ['PUT', 'DELETE']) {
      expect((await ts.request(m, `${base()}/Local.json`, as())).status).toBe(405);
      expect((await ts.request(m, `${base()}.json`, as())).status).toBe(405);
    }
  });
});

describe('list, update, release', () => {
  it('filters by partial number with * wildcard and exact FriendlyName', async () => {
    await ts.request(
      'POST',
      `${base()}.json`,
      as({ form: { PhoneNumber: '+14155550177', FriendlyName: 'Support line' } }),
    );
    const partial = await ts.request('GET', `${base()}.json?PhoneNumber=5550177`, as());
    expect(partial.json.map((n: { phone_number: string }) => n.phone_number)).toEqual(['+14155550177']);
    const wild = await ts.request('GET', `${base()}.json?PhoneNumber=555017*`, as());
    expect(wild.json.map((n: { phone_number: string }) => n.phone_number)).toContain('+14155550177');
    const byName = await ts.request('GET', `${base()}.json?FriendlyName=Support%20line`, as());
    expect(byName.json).toHaveLength(1);
    expect((await ts.request('GET', `${base()}.json?FriendlyName=Support`, as())).json).toHaveLength(0);
    expect((await ts.request('GET', `${base()}.json?Beta=perhaps`, as())).status).toBe(400);
  });

  it('application sid wins and its name is shown; the application must be the account own', async () => {
    const app = await ts.request(
      'POST',
      `${API}/Accounts/${owner.sid}/Applications.json`,
      as({ form: { FriendlyName: 'Main IVR' } }),
    );
    const n = await ts.request('POST', `${base()}.json`, as({ form: { PhoneNumber: '+14155550188' } }));
    const upd = await ts.request(
      'POST',
      `${base()}/${n.json.sid}.json`,
      as({ form: { VoiceApplicationSid: app.json.sid, SmsUrl: 'http://127.0.0.1:9/sms' } }),
    );
    expect(upd.json).toMatchObject({
      voice_application_sid: app.json.sid,
      voice_application_name: 'Main IVR',
      sms_url: 'http://127.0.0.1:9/sms',
    });
    const foreignApp = await ts.request('POST', `${API}/Accounts/${other.sid}/Applications.json`, {
      auth: other.creds,
      form: { FriendlyName: 'X' },
    });
    const bad = await ts.request(
      'POST',
      `${base()}/${n.json.sid}.json`,
      as({ form: { VoiceApplicationSid: foreignApp.json.sid } }),
    );
    expect(bad.status).toBe(400);
  });

  it('transfers a number to another account the caller controls, not to one it does not', async () => {
    const n = await ts.request('POST', `${API}/Accounts/${ts.admin.sid}/IncomingPhoneNumbers.json`, {
      form: { PhoneNumber: '+14155550190' },
    });
    const moved = await ts.request(
      'POST',
      `${API}/Accounts/${ts.admin.sid}/IncomingPhoneNumbers/${n.json.sid}.json`,
      { form: { AccountSid: owner.sid } },
    );
    expect(moved.status).toBe(200);
    expect(moved.json.account_sid).toBe(owner.sid);
    expect((await ts.request('GET', `${base()}/${n.json.sid}.json`, as())).status).toBe(200);
    const refused = await ts.request(
      'POST',
      `${base()}/${n.json.sid}.json`,
      as({ form: { AccountSid: other.sid } }),
    );
    expect(refused.status).toBe(400);
  });

  it('DELETE releases the number (204) so it can be bought again', async () => {
    const n = await ts.request('POST', `${base()}.json`, as({ form: { PhoneNumber: '+14155550199' } }));
    const del = await ts.request('DELETE', `${base()}/${n.json.sid}.json`, as());
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await ts.request('GET', `${base()}/${n.json.sid}.json`, as())).status).toBe(404);
    const again = await ts.request('POST', `${API}/Accounts/${other.sid}/IncomingPhoneNumbers.json`, {
      auth: other.creds,
      form: { PhoneNumber: '+14155550199' },
    });
    expect(again.status).toBe(201);
  });
});

describe('bad input', () => {
  it('refuses each with 400 naming the problem', async () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ PhoneNumber: '4155550100' }, /E\.164/],
      [{ PhoneNumber: '+1415555010x' }, /E\.164/],
      [{ PhoneNumber: '+99912345678' }, /E\.164.*country code/],
      [{ AreaCode: '41' }, /AreaCode/],
      [{ AreaCode: '41', PhoneNumber: '+14155550101' }, /AreaCode/],
      [{}, /PhoneNumber or AreaCode/],
      [{ PhoneNumber: '+14155550102', FriendlyName: 'x'.repeat(65) }, /FriendlyName/],
      [{ PhoneNumber: '+14155550103', VoiceMethod: 'DELETE' }, /VoiceMethod/],
      [{ PhoneNumber: '+14155550104', SmsUrl: 'javascript:alert(1)' }, /SmsUrl/],
    ];
    for (const [form, re] of cases) {
      const r = await ts.request('POST', `${base()}.json`, as({ form }));
      expect(r.status, JSON.stringify(form)).toBe(400);
      expect(r.json.message).toMatch(re);
    }
    // Nothing was bought by the refused requests.
    const list = await ts.request('GET', `${base()}.json?PhoneNumber=415555010`, as());
    expect(list.json).toHaveLength(0);
  });
});
