/**
 * From, To and PhoneNumber are read by one parser on every route: a `+` sent unencoded in a form
 * body (it decodes as a space) is refused with a message that says to send %2B, and the same number
 * sent as %2B is accepted. The bodies are written by hand, as curl `-d` would send them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, type Credentials, startTestServer, type TestServer } from '../../support/server.js';

let ts: TestServer;
let owner: { sid: string; creds: Credentials };
let number: string;
const PLUS_HINT = "is not a valid E.164 number; URL-encode '+' as %2B (curl --data-urlencode)";
const post = (path: string, body: string) =>
  ts.request('POST', `${API}/Accounts/${owner.sid}/${path}`, { auth: owner.creds, form: body });

beforeAll(async () => {
  ts = await startTestServer({ label: 'addresses', env: { NUMBER_POOL: '+15550100000-+15550100099' } });
  const made = await ts.request('POST', `${API}/Accounts.json`, {
    form: { EmailAddress: 'addresses@example.test', Password: 'password-123' },
  });
  owner = { sid: made.json.sid, creds: { user: made.json.sid, secret: made.json.auth_token } };
  const bought = await post('IncomingPhoneNumbers.json', 'PhoneNumber=%2B15550100001');
  expect(bought.status, bought.text).toBe(201);
  number = bought.json.phone_number;
  const client = await post('Clients.json', 'Login=alice&Password=alice-password-1');
  expect(client.status, client.text).toBe(201);
});
afterAll(async () => {
  await ts?.dispose();
});

describe("a '+' sent as a space", () => {
  it('POST /Calls: From and To → 400 naming %2B; %2B → 201', async () => {
    const url = 'Url=http%3A%2F%2F127.0.0.1%3A9%2Fa.xml';
    const badFrom = await post('Calls.json', `From=+15550100001&To=%2B15550100002&${url}`);
    expect(badFrom.status).toBe(400);
    expect(badFrom.json).toMatchObject({ code: 21100, message: `From ' 15550100001' ${PLUS_HINT}` });
    const badTo = await post('Calls.json', `From=%2B15550100001&To=+15550100002&${url}`);
    expect(badTo.status).toBe(400);
    expect(badTo.json).toMatchObject({ code: 21100, message: `To ' 15550100002' ${PLUS_HINT}` });
    const ok = await post('Calls.json', `From=%2B15550100001&To=%2B15550100002&${url}`);
    expect(ok.status, ok.text).toBe(201);
    expect(ok.json).toMatchObject({ from: '+15550100001', to: '+15550100002' });
  });

  it('POST /Calls: a From that is not a caller id is refused', async () => {
    const r = await post(
      'Calls.json',
      'From=sip%3Aa%40b&To=%2B15550100002&Url=http%3A%2F%2F127.0.0.1%3A9%2Fa',
    );
    expect(r.status).toBe(400);
    expect(r.json.message).toMatch(/^From must be an E\.164 number/);
  });

  it('POST /SMS/Messages: From and To → 400 naming %2B; %2B → 201', async () => {
    const badFrom = await post('SMS/Messages.json', 'From=+15550100001&To=client%3Aalice&Body=hi');
    expect(badFrom.status).toBe(400);
    expect(badFrom.json).toMatchObject({ code: 21100, message: `From ' 15550100001' ${PLUS_HINT}` });
    const badTo = await post(
      'SMS/Messages.json',
      `From=${encodeURIComponent(number)}&To=+15550100002&Body=hi`,
    );
    expect(badTo.status).toBe(400);
    expect(badTo.json).toMatchObject({ code: 21211, message: `To ' 15550100002' ${PLUS_HINT}` });
    const ok = await post(
      'SMS/Messages.json',
      `From=${encodeURIComponent(number)}&To=client%3Aalice&Body=hi`,
    );
    expect(ok.status, ok.text).toBe(201);
    expect(ok.json.from).toBe('+15550100001');
  });

  it('POST /IncomingPhoneNumbers: PhoneNumber → 400 naming %2B; %2B → 201', async () => {
    const bad = await post('IncomingPhoneNumbers.json', 'PhoneNumber=+15550100003');
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ code: 21100, message: `PhoneNumber ' 15550100003' ${PLUS_HINT}` });
    const ok = await post('IncomingPhoneNumbers.json', 'PhoneNumber=%2B15550100003');
    expect(ok.status, ok.text).toBe(201);
    expect(ok.json.phone_number).toBe('+15550100003');
  });
});
