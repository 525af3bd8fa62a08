/**
 * Contract test of the OpenAPI document: every route of the route table is in it (every path ×
 * method), its schemas compile, and real responses of the main resources — created through the
 * API, not hand-written — match the schemas the document gives for them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentPath } from '../../../src/http/openapi/document.js';
import { type DocumentedApi, documentedApi } from '../../support/openapi.js';
import { API, type Credentials, startTestServer, type TestServer } from '../../support/server.js';

let ts: TestServer;
let api: DocumentedApi;
// biome-ignore lint/suspicious/noExplicitAny: the document is walked by member names
let doc: any;
let ajv: DocumentedApi['ajv'];
let owner: { sid: string; creds: Credentials };

/** Asserts a real response has the status and matches the documented schema for `template`. */
function expectDocumented(
  res: { status: number; json: unknown; text: string },
  method: string,
  template: string,
  status: number,
): void {
  const entry = ts.server.app.routes.entries.find((e) => e.path === template);
  expect(entry, template).toBeDefined();
  api.expectDocumented(res, method, documentPath(template, entry?.spec), status);
}

const A = `${API}/Accounts/:accountSid`;
const as = (form?: Record<string, string>) => ({ auth: owner.creds, ...(form ? { form } : {}) });

beforeAll(async () => {
  ts = await startTestServer({ label: 'openapi' });
  api = await documentedApi(ts);
  ({ doc, ajv } = api);
  const created = await ts.request('POST', `${API}/Accounts.json`, {
    form: { EmailAddress: 'openapi@example.test', Password: 'password-123' },
  });
  owner = { sid: created.json.sid, creds: { user: created.json.sid, secret: created.json.auth_token } };
});
afterAll(async () => {
  await ts?.dispose();
});

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1, served without authentication, and its schemas compile', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers[0].url).toBe(ts.url);
    for (const name of Object.keys(doc.components.schemas)) {
      expect(ajv.getSchema(`openapi#/components/schemas/${name}`), name).toBeDefined();
    }
  });

  it('describes every path × method of the route table', () => {
    const missing: string[] = [];
    for (const entry of ts.server.app.routes.entries) {
      const path = documentPath(entry.path, entry.spec);
      for (const method of entry.methods) {
        if (!doc.paths[path]?.[method.toLowerCase()]) missing.push(`${method} ${entry.path}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('documents the member limits the server enforces', async () => {
    const create = doc.paths[`${API}/Accounts/{accountSid}/Applications.json`].post;
    const schema = create.requestBody.content['application/x-www-form-urlencoded'].schema;
    expect(schema.properties.FriendlyName.maxLength).toBe(64);
    const tooLong = await ts.request(
      'POST',
      `${API}/Accounts/${owner.sid}/Applications.json`,
      as({ FriendlyName: 'x'.repeat(schema.properties.FriendlyName.maxLength + 1) }),
    );
    expect(tooLong.status).toBe(400);
    const calls = doc.paths[`${API}/Accounts/{accountSid}/Calls.json`].post;
    expect(calls.requestBody.content['application/x-www-form-urlencoded'].schema.required).toEqual([
      'From',
      'To',
      'Url',
    ]);
  });
});

describe('real responses match their schemas', () => {
  it('Account, sub-account list, error body', async () => {
    const one = await ts.request('GET', `${API}/Accounts/${owner.sid}.json`, as());
    expectDocumented(one, 'GET', A, 200);
    expectDocumented(await ts.request('GET', `${API}/Accounts.json`), 'GET', `${API}/Accounts`, 200);
    const missing = await ts.request(
      'GET',
      `${API}/Accounts/${owner.sid}/Calls/CA00000000000000000000000000000000.json`,
      as(),
    );
    expectDocumented(missing, 'GET', `${A}/Calls/:callSid`, 404);
    expect(missing.json.more_info).toBe(`${ts.url}/docs/errors#20404`);
  });

  it('Application, Client, IncomingPhoneNumber, Gateway', async () => {
    const app = await ts.request(
      'POST',
      `${API}/Accounts/${owner.sid}/Applications.json`,
      as({ FriendlyName: 'contract', RcmlUrl: 'http://127.0.0.1:9/app.xml' }),
    );
    expectDocumented(app, 'POST', `${A}/Applications`, 201);
    expectDocumented(
      await ts.request('GET', `${API}/Accounts/${owner.sid}/Applications.json`, as()),
      'GET',
      `${A}/Applications`,
      200,
    );
    const client = await ts.request(
      'POST',
      `${API}/Accounts/${owner.sid}/Clients.json`,
      as({ Login: 'alice', Password: 'password-123', VoiceApplicationSid: app.json.sid }),
    );
    expectDocumented(client, 'POST', `${A}/Clients`, 201);
    expectDocumented(
      await ts.request('GET', `${API}/Accounts/${owner.sid}/Clients/${client.json.sid}.json`, as()),
      'GET',
      `${A}/Clients/:clientSid`,
      200,
    );
    const number = await ts.request(
      'POST',
      `${API}/Accounts/${owner.sid}/IncomingPhoneNumbers.json`,
      as({ PhoneNumber: '+14155550177', VoiceApplicationSid: app.json.sid }),
    );
    expectDocumented(number, 'POST', `${A}/IncomingPhoneNumbers`, 201);
    expectDocumented(
      await ts.request('GET', `${API}/Accounts/${owner.sid}/IncomingPhoneNumbers/Local.json`, as()),
      'GET',
      `${A}/IncomingPhoneNumbers/Local`,
      200,
    );
    // Gateways are the Super Admin's.
    const gw = await ts.request('POST', `${API}/Accounts/${ts.admin.sid}/Management/Gateways.json`, {
      form: { Proxy: '127.0.0.2:5060', UserName: 'u', Password: 'secret-1', Register: 'false' },
    });
    expectDocumented(gw, 'POST', `${A}/Management/Gateways`, 201);
    expectDocumented(
      await ts.request('GET', `${API}/Accounts/${ts.admin.sid}/Management/Gateways.json`),
      'GET',
      `${A}/Management/Gateways`,
      200,
    );
  });

  it('AvailablePhoneNumbers (countries, search), OutgoingCallerId', async () => {
    const avail = `${API}/Accounts/${owner.sid}/AvailablePhoneNumbers`;
    expectDocumented(
      await ts.request('GET', `${avail}.json`, as()),
      'GET',
      `${A}/AvailablePhoneNumbers`,
      200,
    );
    const found = await ts.request('GET', `${avail}/US/Local.json?AreaCode=415&PageSize=2`, as());
    expect(found.json).toHaveLength(2);
    expectDocumented(found, 'GET', `${A}/AvailablePhoneNumbers/:country/Local`, 200);
    const created = await ts.request(
      'POST',
      `${API}/Accounts/${owner.sid}/OutgoingCallerIds.json`,
      as({ PhoneNumber: '+14155550188' }),
    );
    expectDocumented(created, 'POST', `${A}/OutgoingCallerIds`, 201);
    expectDocumented(
      await ts.request('GET', `${API}/Accounts/${owner.sid}/OutgoingCallerIds.json`, as()),
      'GET',
      `${A}/OutgoingCallerIds`,
      200,
    );
  });

  it('Call (created, fetched, paged), Notification, Recording, SMS message', async () => {
    const call = await ts.request(
      'POST',
      `${API}/Accounts/${owner.sid}/Calls.json`,
      // Nothing listens at 127.0.0.9: the call fails, which is what a Notification is made of.
      as({ From: '+15550001000', To: 'sip:nobody@127.0.0.9:5060', Url: 'http://127.0.0.1:9/a.xml' }),
    );
    expectDocumented(call, 'POST', `${A}/Calls`, 201);
    expectDocumented(
      await ts.request('GET', `${API}/Accounts/${owner.sid}/Calls/${call.json.sid}.json`, as()),
      'GET',
      `${A}/Calls/:callSid`,
      200,
    );
    const calls = await ts.request('GET', `${API}/Accounts/${owner.sid}/Calls.json?PageSize=1`, as());
    expectDocumented(calls, 'GET', `${A}/Calls`, 200);
    expect(calls.json.calls).toHaveLength(1);

    const n = await ts.server.notifier.notify({
      accountSid: owner.sid,
      callSid: call.json.sid,
      errorCode: 11200,
      messageText: 'contract',
      requestUrl: 'http://127.0.0.1:9/a.xml',
      requestMethod: 'POST',
    });
    expect(n).not.toBeNull();
    expectDocumented(
      await ts.request('GET', `${API}/Accounts/${owner.sid}/Notifications/${n?.sid}.json`, as()),
      'GET',
      `${A}/Notifications/:notificationSid`,
      200,
    );
    expectDocumented(
      await ts.request('GET', `${API}/Accounts/${owner.sid}/Notifications.json`, as()),
      'GET',
      `${A}/Notifications`,
      200,
    );

    const rec = await ts.server.recordings.create({
      accountSid: owner.sid,
      callSid: call.json.sid,
      durationSeconds: 1,
      wav: Buffer.alloc(64),
    });
    expectDocumented(
      await ts.request('GET', `${API}/Accounts/${owner.sid}/Recordings/${rec.sid}.json`, as()),
      'GET',
      `${A}/Recordings/:recordingSid`,
      200,
    );
    expectDocumented(
      await ts.request('GET', `${API}/Accounts/${owner.sid}/Calls/${call.json.sid}/Recordings.json`, as()),
      'GET',
      `${A}/Calls/:callSid/Recordings`,
      200,
    );

    const numbers = await ts.request('GET', `${API}/Accounts/${owner.sid}/IncomingPhoneNumbers.json`, as());
    const from = numbers.json[0]?.phone_number ?? '+14155550177';
    const sms = await ts.request(
      'POST',
      `${API}/Accounts/${owner.sid}/SMS/Messages.json`,
      as({ From: from, To: 'client:alice', Body: 'contract' }),
    );
    expectDocumented(sms, 'POST', `${A}/SMS/Messages`, 201);
    expectDocumented(
      await ts.request('GET', `${API}/Accounts/${owner.sid}/SMS/Messages.json`, as()),
      'GET',
      `${A}/SMS/Messages`,
      200,
    );
  });

  it('a required member the declaration names is refused before the handler (21101)', async () => {
    const r = await ts.request(
      'POST',
      `${API}/Accounts/${owner.sid}/Calls.json`,
      as({ From: '+15550001000' }),
    );
    expectDocumented(r, 'POST', `${A}/Calls`, 400);
    expect(r.json).toMatchObject({ code: 21101, message: 'To is required' });
  });
});
