/**
 * Contract test of the `2010-04-01` part of the OpenAPI document: every path × method the Twilio
 * surface answers (every native route its mapping table reaches) is in the document and maps back
 * onto that native route, and real 2010 responses — single resources and pages, made through the
 * surface — match the Twilio schemas the document gives for them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentPath } from '../../../src/http/openapi/document.js';
import { TWILIO_SUBRESOURCES } from '../../../src/http/twilio/dialect.js';
import { nativePath, twilioTemplate } from '../../../src/http/twilio/surface.js';
import { type DocumentedApi, documentedApi } from '../../support/openapi.js';
import { API, type Credentials, startTestServer, type TestServer } from '../../support/server.js';

let ts: TestServer;
// biome-ignore lint/suspicious/noExplicitAny: the document is walked by member names
let doc: any;
let api: DocumentedApi;
let owner: { sid: string; creds: Credentials };

const T = '/2010-04-01';
const A = `${T}/Accounts/:accountSid`;
const as = (form?: Record<string, string>) => ({ auth: owner.creds, ...(form ? { form } : {}) });
/** A concrete path for a template: each `:name` replaced by a sample value. */
const concrete = (template: string) => template.replace(/:([A-Za-z]+)/g, 'X$1');

/** Asserts a real 2010 response has the status and matches the documented schema for `template`. */
function expectDocumented(
  res: { status: number; json: unknown; text: string },
  method: string,
  template: string,
  status: number,
): void {
  api.expectDocumented(res, method, documentPath(template, undefined), status);
}

beforeAll(async () => {
  ts = await startTestServer({ label: 'twopenapi', env: { NUMBER_POOL: '+14155550100-+14155550199' } });
  api = await documentedApi(ts);
  doc = api.doc;
  const created = await ts.request('POST', `${API}/Accounts.json`, {
    form: { EmailAddress: 'tw-openapi@example.test', Password: 'password-123' },
  });
  owner = { sid: created.json.sid, creds: { user: created.json.sid, secret: created.json.auth_token } };
});
afterAll(async () => {
  await ts?.dispose();
});

/** What docs/twilio.md says the surface serves (under the account), written out independently of its tables. */
const SERVED = [
  '',
  '/Calls',
  '/Calls/:callSid',
  '/Calls/:callSid/Recordings',
  '/Calls/:callSid/Notifications',
  '/Messages',
  '/Messages/:messageSid',
  '/IncomingPhoneNumbers',
  '/IncomingPhoneNumbers/Local',
  '/IncomingPhoneNumbers/TollFree',
  '/IncomingPhoneNumbers/Mobile',
  '/IncomingPhoneNumbers/:numberSid',
  '/Recordings',
  '/Recordings/:recordingSid',
  '/Notifications',
  '/Notifications/:notificationSid',
  '/Applications',
  '/Applications/:applicationSid',
];

describe('OpenAPI document: the 2010-04-01 surface', () => {
  it('has the documented 2010 paths with every method of the native route serving each', () => {
    const missing: string[] = [];
    for (const suffix of SERVED) {
      const template = `${A}${suffix}`;
      // The surface's runtime translation decides which native route answers.
      const native = nativePath(`${concrete(template)}.json`)?.path;
      const entry = ts.server.app.routes.entries.find((e) => `${concrete(e.path)}.json` === native);
      expect(entry, `${template} → ${native}`).toBeDefined();
      for (const method of entry?.methods ?? []) {
        if (!doc.paths[documentPath(template, undefined)]?.[method.toLowerCase()]) {
          missing.push(`${method} ${template}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('has every path × method the surface answers, each mapping back onto its native route', () => {
    const missing: string[] = [];
    let count = 0;
    for (const entry of ts.server.app.routes.entries) {
      if (entry.spec?.jsonOnly) continue;
      const mapped = twilioTemplate(entry.path);
      if (!mapped) continue;
      // The surface's own path translation must lead back to this route.
      expect(nativePath(`${concrete(mapped.path)}.json`)?.path).toBe(`${concrete(entry.path)}.json`);
      const path = documentPath(mapped.path, entry.spec);
      for (const method of entry.methods) {
        count++;
        if (!doc.paths[path]?.[method.toLowerCase()]) missing.push(`${method} ${mapped.path}`);
      }
    }
    expect(missing).toEqual([]);
    expect(count).toBeGreaterThan(20);
    // And nothing else: every 2010 operation of the document is served by a native route.
    const natives = new Set(ts.server.app.routes.entries.map((e) => `${concrete(e.path)}.json`));
    for (const path of Object.keys(doc.paths).filter((p) => p.startsWith(`${T}/Accounts/{accountSid}`))) {
      const native = nativePath(path.replace(/\{([A-Za-z]+)\}/g, 'X$1'))?.path;
      // Gateways are native under both version segments.
      if (path.includes('/Management/')) continue;
      expect(native && natives.has(native), path).toBe(true);
    }
    for (const [key, name] of TWILIO_SUBRESOURCES) {
      expect(doc.paths[`${T}/Accounts/{accountSid}/${name}.json`]?.get, key).toBeDefined();
    }
  });

  it('documents the Twilio members of requests and the nullable page links', () => {
    const apps = doc.paths[`${T}/Accounts/{accountSid}/Applications.json`];
    const form = apps.post.requestBody.content['application/x-www-form-urlencoded'].schema.properties;
    expect(Object.keys(form)).toEqual(expect.arrayContaining(['VoiceUrl', 'SmsUrl', 'VoiceCallerIdLookup']));
    expect(form.VoiceMethod.enum).toEqual(['POST']);
    expect(form.VoiceFallbackUrl).toBeUndefined();
    const messages = doc.paths[`${T}/Accounts/{accountSid}/Messages.json`].get;
    expect(messages.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['DateSent', 'DateSent<', 'DateSent>', 'PageToken', 'Page', 'PageSize']),
    );
    const page = doc.components.schemas.TwilioCallPage;
    expect(page.properties.next_page_uri.type).toEqual(['string', 'null']);
    expect(page.properties.num_pages).toBeUndefined();
  });
});

describe('real 2010 responses match their schemas', () => {
  it('Account, Application, IncomingPhoneNumber, error body', async () => {
    expectDocumented(await ts.request('GET', `${T}/Accounts/${owner.sid}.json`, as()), 'GET', A, 200);
    const app = await ts.request(
      'POST',
      `${T}/Accounts/${owner.sid}/Applications.json`,
      as({ FriendlyName: 'contract', VoiceUrl: 'http://127.0.0.1:9/app.xml' }),
    );
    expectDocumented(app, 'POST', `${A}/Applications`, 201);
    expect(app.json.voice_url).toBe('http://127.0.0.1:9/app.xml');
    const updated = await ts.request(
      'POST',
      `${T}/Accounts/${owner.sid}/Applications/${app.json.sid}.json`,
      as({ SmsUrl: 'http://127.0.0.1:9/sms.xml' }),
    );
    expectDocumented(updated, 'POST', `${A}/Applications/:applicationSid`, 200);
    expectDocumented(
      await ts.request('GET', `${T}/Accounts/${owner.sid}/Applications/${app.json.sid}.json`, as()),
      'GET',
      `${A}/Applications/:applicationSid`,
      200,
    );
    expectDocumented(
      await ts.request('GET', `${T}/Accounts/${owner.sid}/Applications.json`, as()),
      'GET',
      `${A}/Applications`,
      200,
    );
    const number = await ts.request(
      'POST',
      `${T}/Accounts/${owner.sid}/IncomingPhoneNumbers.json`,
      as({ PhoneNumber: '+14155550177', VoiceUrl: 'http://127.0.0.1:9/n.xml' }),
    );
    expectDocumented(number, 'POST', `${A}/IncomingPhoneNumbers`, 201);
    expectDocumented(
      await ts.request(
        'GET',
        `${T}/Accounts/${owner.sid}/IncomingPhoneNumbers/${number.json.sid}.json`,
        as(),
      ),
      'GET',
      `${A}/IncomingPhoneNumbers/:numberSid`,
      200,
    );
    expectDocumented(
      await ts.request('GET', `${T}/Accounts/${owner.sid}/IncomingPhoneNumbers/Local.json?PageSize=1`, as()),
      'GET',
      `${A}/IncomingPhoneNumbers/Local`,
      200,
    );
    const missing = await ts.request(
      'GET',
      `${T}/Accounts/${owner.sid}/Calls/CA${'0'.repeat(32)}.json`,
      as(),
    );
    expectDocumented(missing, 'GET', `${A}/Calls/:callSid`, 404);
  });

  it('Call (created, fetched, paged both ways), Notification, Recording, Message', async () => {
    const calls: string[] = [];
    for (let i = 0; i < 2; i++) {
      const call = await ts.request(
        'POST',
        `${T}/Accounts/${owner.sid}/Calls.json`,
        // Nothing listens at 127.0.0.9: the call fails, which is what a Notification is made of.
        as({ From: '+15550001000', To: 'sip:nobody@127.0.0.9:5060', Url: 'http://127.0.0.1:9/a.xml' }),
      );
      expectDocumented(call, 'POST', `${A}/Calls`, 201);
      calls.push(call.json.sid);
    }
    const callSid = calls[0] as string;
    expectDocumented(
      await ts.request('GET', `${T}/Accounts/${owner.sid}/Calls/${callSid}.json`, as()),
      'GET',
      `${A}/Calls/:callSid`,
      200,
    );
    const first = await ts.request('GET', `${T}/Accounts/${owner.sid}/Calls.json?PageSize=1`, as());
    expectDocumented(first, 'GET', `${A}/Calls`, 200);
    expect(first.json.previous_page_uri).toBeNull();
    expect(first.json.next_page_uri).toMatch(/^\/2010-04-01\/.*PageToken=PA/);
    const second = await ts.request('GET', first.json.next_page_uri, as());
    expectDocumented(second, 'GET', `${A}/Calls`, 200);
    expect(second.json.previous_page_uri).toMatch(/^\/2010-04-01\//);

    const n = await ts.server.notifier.notify({
      accountSid: owner.sid,
      callSid,
      errorCode: 11200,
      messageText: 'contract',
      requestUrl: 'http://127.0.0.1:9/a.xml',
      requestMethod: 'POST',
    });
    expect(n).not.toBeNull();
    expectDocumented(
      await ts.request('GET', `${T}/Accounts/${owner.sid}/Notifications/${n?.sid}.json`, as()),
      'GET',
      `${A}/Notifications/:notificationSid`,
      200,
    );
    expectDocumented(
      await ts.request('GET', `${T}/Accounts/${owner.sid}/Notifications.json?MessageDate>=2020-01-01`, as()),
      'GET',
      `${A}/Notifications`,
      200,
    );
    expectDocumented(
      await ts.request('GET', `${T}/Accounts/${owner.sid}/Calls/${callSid}/Notifications.json`, as()),
      'GET',
      `${A}/Calls/:callSid/Notifications`,
      200,
    );

    const rec = await ts.server.recordings.create({
      accountSid: owner.sid,
      callSid,
      durationSeconds: 1,
      wav: Buffer.alloc(64),
    });
    expectDocumented(
      await ts.request('GET', `${T}/Accounts/${owner.sid}/Recordings/${rec.sid}.json`, as()),
      'GET',
      `${A}/Recordings/:recordingSid`,
      200,
    );
    expectDocumented(
      await ts.request('GET', `${T}/Accounts/${owner.sid}/Recordings.json`, as()),
      'GET',
      `${A}/Recordings`,
      200,
    );
    expectDocumented(
      await ts.request('GET', `${T}/Accounts/${owner.sid}/Calls/${callSid}/Recordings.json`, as()),
      'GET',
      `${A}/Calls/:callSid/Recordings`,
      200,
    );

    const client = await ts.request(
      'POST',
      `${API}/Accounts/${owner.sid}/Clients.json`,
      as({ Login: 'alice', Password: 'password-123' }),
    );
    expect(client.status, client.text).toBe(201);
    const sms = await ts.request(
      'POST',
      `${T}/Accounts/${owner.sid}/Messages.json`,
      as({ From: '+14155550177', To: 'client:alice', Body: 'contract' }),
    );
    expectDocumented(sms, 'POST', `${A}/Messages`, 201);
    expectDocumented(
      await ts.request('GET', `${T}/Accounts/${owner.sid}/Messages/${sms.json.sid}.json`, as()),
      'GET',
      `${A}/Messages/:messageSid`,
      200,
    );
    expectDocumented(
      await ts.request('GET', `${T}/Accounts/${owner.sid}/Messages.json`, as()),
      'GET',
      `${A}/Messages`,
      200,
    );
  });
});
