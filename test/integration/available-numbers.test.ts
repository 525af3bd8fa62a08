/** AvailablePhoneNumbers over HTTP: countries, search by kind and filters, then purchase of a result. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, type Credentials, startTestServer, type TestServer } from '../support/server.js';
import { XMLParser } from '../support/xml.js';

let ts: TestServer;
let owner: { sid: string; creds: Credentials };
let other: { sid: string; creds: Credentials };
const base = () => `${API}/Accounts/${owner.sid}/AvailablePhoneNumbers`;
const get = (path: string, creds = owner.creds) => ts.request('GET', path, { auth: creds });

async function account(email: string) {
  const res = await ts.request('POST', `${API}/Accounts.json`, {
    form: { EmailAddress: email, Password: 'password-123' },
  });
  return { sid: res.json.sid as string, creds: { user: res.json.sid, secret: res.json.auth_token } };
}

beforeAll(async () => {
  ts = await startTestServer({
    label: 'available',
    env: {
      NUMBER_POOL:
        '+14155550100-+14155550119@CA,+12015550100-+12015550109@NJ,+18005550100-+18005550104,+33612345600-+33612345609',
    },
  });
  owner = await account('available@example.test');
  other = await account('available-other@example.test');
});
afterAll(async () => {
  await ts?.dispose();
});

describe('AvailablePhoneNumbers', () => {
  it('lists the countries of the pool with their Local/TollFree/Mobile resources', async () => {
    const r = await get(`${base()}.json`);
    expect(r.status).toBe(200);
    expect(r.json.map((c: { country_code: string }) => c.country_code)).toEqual(['FR', 'US']);
    expect(r.json[1]).toEqual({
      country_code: 'US',
      country: 'United States',
      beta: false,
      uri: `${base()}/US.json`,
      subresource_uris: {
        local: `${base()}/US/Local.json`,
        toll_free: `${base()}/US/TollFree.json`,
        mobile: `${base()}/US/Mobile.json`,
      },
    });
  });

  it('searches Local numbers by AreaCode, Contains and InRegion, with Twilio members', async () => {
    const r = await get(`${base()}/US/Local.json?AreaCode=201&PageSize=3`);
    expect(r.status).toBe(200);
    expect(r.json).toHaveLength(3);
    expect(r.json[0]).toMatchObject({
      friendly_name: expect.stringMatching(/^\(201\) 555-010\d$/),
      phone_number: expect.stringMatching(/^\+1201555010\d$/),
      region: 'NJ',
      iso_country: 'US',
      capabilities: { voice: true, SMS: true, MMS: false, fax: false },
    });
    const contains = await get(`${base()}/US/Local.json?Contains=55501*9`);
    expect(contains.json.map((n: { phone_number: string }) => n.phone_number).sort()).toEqual([
      '+12015550109',
      '+14155550109',
      '+14155550119',
    ]);
    const region = await get(`${base()}/US/Local.json?InRegion=CA`);
    expect(region.json).toHaveLength(20);
    expect((await get(`${base()}/US/TollFree.json`)).json).toHaveLength(5);
    expect((await get(`${base()}/FR/Mobile.json?PageSize=2`)).json).toHaveLength(2);
    expect((await get(`${base()}/US/Local.json?MmsEnabled=true`)).json).toEqual([]);
  });

  it('answers XML by default', async () => {
    const r = await get(`${base()}/US/TollFree?PageSize=1`);
    expect(r.status).toBe(200);
    const doc = new XMLParser().parse(r.text);
    const n = doc.ServiceResponse.AvailablePhoneNumbers.AvailablePhoneNumber;
    expect(String(n.PhoneNumber)).toMatch(/^\+1800555010\d$/);
    expect(n.Capabilities).toEqual({ Voice: 'true', SMS: 'true', MMS: 'false', Fax: 'false' });
  });

  it('search then purchase: a bought number is no longer offered, to anyone', async () => {
    const found = await get(`${base()}/US/Local.json?Contains=4155550105`);
    expect(found.json).toHaveLength(1);
    const bought = await ts.request('POST', `${API}/Accounts/${owner.sid}/IncomingPhoneNumbers.json`, {
      auth: owner.creds,
      form: { PhoneNumber: found.json[0].phone_number },
    });
    expect(bought.status).toBe(201);
    expect((await get(`${base()}/US/Local.json?Contains=4155550105`)).json).toEqual([]);
    const theirs = `${API}/Accounts/${other.sid}/AvailablePhoneNumbers/US/Local.json?Contains=4155550105`;
    expect((await get(theirs, other.creds)).json).toEqual([]);
  });

  it('refuses bad input with the error catalogue, and other tenants get 404', async () => {
    const unknown = await get(`${base()}/XX/Local.json`);
    expect(unknown.status).toBe(404);
    const contains = await get(`${base()}/US/Local.json?Contains=5%2B1`);
    expect(contains.status).toBe(400);
    expect(contains.json.code).toBe(21100);
    const geo = await get(`${base()}/US/Local.json?InPostalCode=94105`);
    expect(geo.status).toBe(400);
    expect(geo.json.message).toMatch(/InPostalCode/);
    const area = await get(`${base()}/FR/Local.json?AreaCode=415`);
    expect(area.status).toBe(400);
    const size = await get(`${base()}/US/Local.json?PageSize=0`);
    expect(size.status).toBe(400);
    expect((await get(`${base()}/US/Local.json`, other.creds)).status).toBe(404);
    expect(
      (await ts.request('POST', `${base()}/US/Local.json`, { auth: owner.creds, form: {} })).status,
    ).toBe(405);
  });
});
