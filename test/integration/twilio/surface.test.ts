/**
 * The 2010-04-01 surface over HTTP: tenants stay apart, paths it does not serve are 404, lists the
 * native surface returns whole are paged, Twilio's date filters reach the native ones, and bad input
 * gets a 4xx in Twilio's error shape (never a 5xx).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, type Credentials, startTestServer, type TestServer } from '../../support/server.js';

let ts: TestServer;
let alice: { sid: string; creds: Credentials };
let bob: { sid: string; creds: Credentials };
const T = '/2010-04-01';

async function account(email: string) {
  const r = await ts.request('POST', `${API}/Accounts.json`, {
    form: { EmailAddress: email, Password: 'password-123', Role: 'Developer' },
  });
  return {
    sid: r.json.sid as string,
    creds: { user: r.json.sid as string, secret: r.json.auth_token as string },
  };
}

beforeAll(async () => {
  ts = await startTestServer({ label: 'twsurface', env: { NUMBER_POOL: '+14155550100-+14155550199' } });
  alice = await account('alice-tw@example.test');
  bob = await account('bob-tw@example.test');
  for (const n of ['+14155550110', '+14155550111', '+14155550112']) {
    const r = await ts.request('POST', `${T}/Accounts/${alice.sid}/IncomingPhoneNumbers.json`, {
      auth: alice.creds,
      form: { PhoneNumber: n },
    });
    expect(r.status, r.text).toBe(201);
  }
});
afterAll(async () => {
  await ts?.dispose();
});

describe('2010-04-01 surface', () => {
  it("another tenant's resources are 404, and so are its lists", async () => {
    const mine = await ts.request('GET', `${T}/Accounts/${alice.sid}/IncomingPhoneNumbers.json`, {
      auth: alice.creds,
    });
    const sid = mine.json.incoming_phone_numbers[0].sid as string;
    for (const path of [
      `${T}/Accounts/${alice.sid}/IncomingPhoneNumbers.json`,
      `${T}/Accounts/${alice.sid}/IncomingPhoneNumbers/${sid}.json`,
      `${T}/Accounts/${alice.sid}/Calls.json`,
      `${T}/Accounts/${alice.sid}/Messages.json`,
      `${T}/Accounts/${alice.sid}.json`,
    ]) {
      const r = await ts.request('GET', path, { auth: bob.creds });
      expect({ path, status: r.status }).toEqual({ path, status: 404 });
      expect(r.json).toMatchObject({ code: 20404, status: 404 });
    }
    const steal = await ts.request('POST', `${T}/Accounts/${bob.sid}/IncomingPhoneNumbers/${sid}.json`, {
      auth: bob.creds,
      form: { VoiceUrl: 'http://127.0.0.1:9/x' },
    });
    expect(steal.status).toBe(404);
  });

  it('serves only the mapped resources; others are 404 in Twilio error shape', async () => {
    for (const path of [
      `${T}/Accounts/${alice.sid}/Conferences.json`,
      `${T}/Accounts/${alice.sid}/SMS/Messages.json`,
      `${T}/Accounts/${alice.sid}/Clients.json`,
      `${T}/Accounts.json`,
      `${T}/Accounts/${alice.sid}/Messages/SM0/Media.json`,
    ]) {
      const r = await ts.request('GET', path, { auth: alice.creds });
      expect({ path, status: r.status }).toEqual({ path, status: 404 });
    }
    // Paths the native surface already serves under 2010-04-01 (gateways) are left to it.
    const gw = await ts.request('GET', `${T}/Accounts/${ts.admin.sid}/Management/Gateways.json`);
    expect(gw.status).toBe(200);
    expect(Array.isArray(gw.json)).toBe(true);
  });

  it('pages lists the native surface returns whole (IncomingPhoneNumbers) with Twilio links', async () => {
    const base = `${T}/Accounts/${alice.sid}/IncomingPhoneNumbers.json`;
    const p0 = await ts.request('GET', `${base}?PageSize=2`, { auth: alice.creds });
    expect(p0.json).toMatchObject({ page: 0, page_size: 2, start: 0, end: 1, previous_page_uri: null });
    expect(p0.json.incoming_phone_numbers).toHaveLength(2);
    expect(p0.json.next_page_uri).toMatch(
      /^\/2010-04-01\/Accounts\/AC[0-9a-f]{32}\/IncomingPhoneNumbers\.json\?.*Page=1/,
    );
    const p1 = await ts.request('GET', p0.json.next_page_uri, { auth: alice.creds });
    expect(p1.json.incoming_phone_numbers).toHaveLength(1);
    expect(p1.json.next_page_uri).toBeNull();
    const all = [...p0.json.incoming_phone_numbers, ...p1.json.incoming_phone_numbers].map(
      (n) => n.phone_number,
    );
    expect(all.sort()).toEqual(['+14155550110', '+14155550111', '+14155550112']);
    // The native surface still answers the whole list as before.
    const native = await ts.request('GET', `${API}/Accounts/${alice.sid}/IncomingPhoneNumbers.json`, {
      auth: alice.creds,
    });
    expect(native.json).toHaveLength(3);
  });

  it("maps Twilio's date filters onto the native ones", async () => {
    const base = `${T}/Accounts/${alice.sid}`;
    const past = await ts.request('GET', `${base}/Notifications.json?MessageDate%3C=2000-01-01`, {
      auth: alice.creds,
    });
    expect(past.status).toBe(200);
    for (const q of ['DateSent%3E=2999-01-01', 'DateSent=2999-01-01']) {
      const r = await ts.request('GET', `${base}/Messages.json?${q}`, { auth: alice.creds });
      expect(r.status).toBe(200);
      expect(r.json.messages).toEqual([]);
    }
    const bad = await ts.request('GET', `${base}/Recordings.json?DateCreated=yesterday`, {
      auth: alice.creds,
    });
    expect(bad.status).toBe(400);
    expect(bad.json.message).toContain('DateCreated');
  });

  it('bad input is a 4xx with the error shape, never a 5xx', async () => {
    const base = `${T}/Accounts/${alice.sid}`;
    const cases: [string, string, string | undefined][] = [
      ['GET', `${base}/Calls.json?PageSize=0`, undefined],
      ['GET', `${base}/IncomingPhoneNumbers.json?PageSize=abc`, undefined],
      ['POST', `${base}/Applications.json`, 'FriendlyName=%ZZ'],
      [
        'POST',
        `${base}/Applications.json`,
        'FriendlyName=a&VoiceUrl=http://127.0.0.1/a&SmsUrl=http://127.0.0.1/b',
      ],
      ['POST', `${base}/Applications.json`, 'FriendlyName=a&VoiceMethod=GET'],
      ['POST', `${base}/Calls.json`, 'From=%2B15550001000&To=%2B15550002000&ApplicationSid=AP1'],
      ['POST', `${base}/Messages.json`, 'From=%2B14155550110&To=%2B15550002000&Body=x&MediaUrl=http://x/y'],
      ['POST', `${base}/Applications.json`, `FriendlyName=${'x'.repeat(2_000_000)}`],
      ['GET', `${T}/Accounts/%ZZ/Calls.json`, undefined],
    ];
    for (const [method, path, body] of cases) {
      const r = await ts.request(method, path, {
        auth: alice.creds,
        ...(body === undefined ? {} : { form: body }),
      });
      const label = `${method} ${path.slice(0, 80)} ${body?.slice(0, 60) ?? ''}`;
      expect({ label, ok: r.status >= 400 && r.status < 500 }).toEqual({ label, ok: true });
      expect(r.json).toMatchObject({ status: r.status });
      expect(typeof r.json.code).toBe('number');
    }
  });

  it('an application updated with SmsUrl becomes an SMS application; XML paths keep the native form', async () => {
    const base = `${T}/Accounts/${alice.sid}/Applications`;
    const created = await ts.request('POST', `${base}.json`, {
      auth: alice.creds,
      form: { FriendlyName: 'texts', VoiceUrl: 'http://127.0.0.1:9/voice', VoiceCallerIdLookup: 'true' },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.json).toMatchObject({
      voice_url: 'http://127.0.0.1:9/voice',
      sms_url: null,
      voice_caller_id_lookup: true,
    });
    const updated = await ts.request('POST', `${base}/${created.json.sid}.json`, {
      auth: alice.creds,
      form: { SmsUrl: 'http://127.0.0.1:9/sms' },
    });
    expect(updated.json).toMatchObject({ voice_url: null, sms_url: 'http://127.0.0.1:9/sms', kind: 'sms' });
    const xml = await ts.request('GET', `${base}/${created.json.sid}`, { auth: alice.creds });
    expect(xml.status).toBe(200);
    expect(xml.text).toContain('<ServiceResponse><Application>');
  });
});
