/**
 * Errors a user can act on: a REST call that fails says why in its record (`sip_response_code`) and in
 * a Notification linked to the call (the SIP status and reason, or "no outbound route", "client not
 * registered"), not only in the server log; and `StatusCallbackEvent` given repeated (as Twilio's SDKs
 * send it) or space-separated asks for every event named.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, type Credentials, startTestServer, type TestServer } from '../../support/server.js';
import { startSipp } from '../../support/sipp.js';
import { until } from '../../support/until.js';
import { startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';

let ts: TestServer;
let hooks: WebhookServer;
let owner: { sid: string; creds: Credentials };

beforeAll(async () => {
  ts = await startTestServer({ label: 'callfail' });
  hooks = await startWebhookServer();
  hooks.script('/status', { status: 204 });
  hooks.script('/answer', {
    status: 200,
    headers: { 'Content-Type': 'text/xml' },
    body: '<Response><Pause length="20"/></Response>',
  });
  const r = await ts.request('POST', `${API}/Accounts.json`, {
    auth: ts.admin,
    form: { EmailAddress: 'failing@example.test', Password: 'password-123', Role: 'Developer' },
  });
  owner = { sid: r.json.sid, creds: { user: r.json.sid, secret: r.json.auth_token } };
});
afterAll(async () => {
  await hooks?.close();
  await ts?.dispose();
});

const calls = () => `${API}/Accounts/${owner.sid}/Calls`;
const TERMINAL = ['completed', 'failed', 'busy', 'no-answer', 'canceled'];

async function createCall(to: string, form: Record<string, string | string[]> = {}): Promise<string> {
  const r = await ts.request('POST', `${calls()}.json`, {
    auth: owner.creds,
    form: { From: '+15550001000', To: to, Url: `${hooks.origin}/answer`, ...form },
  });
  expect(r.status).toBe(201);
  expect(r.json.sip_response_code).toBeNull();
  return r.json.sid as string;
}

async function ended(sid: string) {
  return until(
    async () => (await ts.request('GET', `${calls()}/${sid}.json`, { auth: owner.creds })).json,
    (c) => TERMINAL.includes(c.status),
  );
}

async function notificationsOf(sid: string) {
  return until(
    async () =>
      (await ts.request('GET', `${calls()}/${sid}/Notifications.json`, { auth: owner.creds })).json
        .notifications as Array<{ call_sid: string; error_code: string | number; message_text: string }>,
    (l) => l.length > 0,
  );
}

describe('a failed REST call says why', () => {
  it('the far end answers 404: failed, sip_response_code 404, Notification 13224 naming 404 Not Found', async () => {
    const uas = await startSipp({ scenario: 'uas-not-found-expect-ack.xml', localIp: '127.0.0.3' });
    const sid = await createCall(`sip:nobody@127.0.0.3:${uas.localPort}`);
    const call = await ended(sid);
    expect(call).toMatchObject({ status: 'failed', sip_response_code: 404 });
    expect((await uas.done).errors).toBe('');
    const [note] = await notificationsOf(sid);
    expect(note).toMatchObject({ call_sid: sid });
    expect(Number(note!.error_code)).toBe(13224);
    expect(note!.message_text).toContain('404 Not Found');
    // The XML rendering carries the same member.
    const xml = await ts.request('GET', `${calls()}/${sid}`, { auth: owner.creds });
    expect(xml.text).toContain('<SipResponseCode>404</SipResponseCode>');
  });

  it('no outbound route for a number: failed, 503, and the Notification says so', async () => {
    const sid = await createCall('+15550009999');
    expect(await ended(sid)).toMatchObject({ status: 'failed', sip_response_code: 503 });
    const [note] = await notificationsOf(sid);
    expect(Number(note!.error_code)).toBe(13224);
    expect(note!.message_text).toMatch(/no outbound route/);
  });

  it('a client that is not registered: no-answer, 480, and the Notification says so', async () => {
    const sid = await createCall('client:nobody-here');
    expect(await ended(sid)).toMatchObject({ status: 'no-answer', sip_response_code: 480 });
    const [note] = await notificationsOf(sid);
    expect(note!.message_text).toMatch(/client not registered/);
  });

  it('busy keeps its 486 on the record; an answered call has 200', async () => {
    const busyUas = await startSipp({ scenario: 'uas-busy-expect-ack.xml', localIp: '127.0.0.3' });
    const busy = await createCall(`sip:bob@127.0.0.3:${busyUas.localPort}`, {
      StatusCallback: `${hooks.origin}/status`,
    });
    expect(await ended(busy)).toMatchObject({ status: 'busy', sip_response_code: 486 });
    await busyUas.done;
    // The completed callback carries it too (Twilio's SipResponseCode).
    const [last] = await until(
      () =>
        hooks
          .requestsTo('/status')
          .map((r) => new URLSearchParams(r.rawBody.toString()))
          .filter((f) => f.get('CallSid') === busy),
      (l) => l.length > 0,
    );
    expect(last?.get('CallStatus')).toBe('busy');
    expect(last?.get('SipResponseCode')).toBe('486');
    const uas = await startSipp({ scenario: 'uas-answer-then-bye.xml', localIp: '127.0.0.3' });
    const ok = await createCall(`sip:bob@127.0.0.3:${uas.localPort}`);
    expect(await ended(ok)).toMatchObject({ status: 'completed', sip_response_code: 200 });
    expect((await uas.done).errors).toBe('');
  });
});

describe('StatusCallbackEvent', () => {
  it('repeated and space-separated values are all honoured', async () => {
    const uas = await startSipp({ scenario: 'uas-answer-then-bye.xml', localIp: '127.0.0.3' });
    const sid = await createCall(`sip:bob@127.0.0.3:${uas.localPort}`, {
      StatusCallback: `${hooks.origin}/status`,
      StatusCallbackEvent: ['initiated', 'ringing answered', 'completed'],
    });
    expect(await ended(sid)).toMatchObject({ status: 'completed' });
    expect((await uas.done).errors).toBe('');
    const statuses = await until(
      () =>
        hooks
          .requestsTo('/status')
          .map((r) => new URLSearchParams(r.rawBody.toString()))
          .filter((f) => f.get('CallSid') === sid)
          .map((f) => f.get('CallStatus')),
      (l) => l.length >= 4,
    );
    expect(statuses).toEqual(['initiated', 'ringing', 'in-progress', 'completed']);
  });

  it('an unknown event in any occurrence is a 400 naming it', async () => {
    const r = await ts.request('POST', `${calls()}.json`, {
      auth: owner.creds,
      form: {
        From: '+15550001000',
        To: '+15550002222',
        Url: `${hooks.origin}/answer`,
        StatusCallbackEvent: ['initiated', 'hung'],
      },
    });
    expect(r.status).toBe(400);
    expect(r.json.message).toMatch(/hung/);
  });
});
