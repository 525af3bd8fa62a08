/**
 * A markup server answering with NUL bytes (Postgres text cannot hold them): the call still gets its
 * Notification (12100 for a document, 11200 for an HTTP error page), stored with NUL shown as ␀,
 * and the caller a clean refusal (603) instead of a call left to the SIP timers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, type Credentials, startTestServer, type TestServer } from '../../support/server.js';
import { runSipp } from '../../support/sipp.js';
import { until } from '../../support/until.js';
import { startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';

let ts: TestServer;
let hooks: WebhookServer;
let owner: { sid: string; creds: Credentials };
let target: string;

beforeAll(async () => {
  ts = await startTestServer({ label: 'nulhook' });
  hooks = await startWebhookServer();
  const r = await ts.request('POST', `${API}/Accounts.json`, {
    auth: ts.admin,
    form: { EmailAddress: 'nul@example.test', Password: 'password-123', Role: 'Developer' },
  });
  owner = { sid: r.json.sid, creds: { user: r.json.sid, secret: r.json.auth_token } };
  target = `127.0.0.1:${ts.server.sip!.stack.port}`;
});
afterAll(async () => {
  await hooks?.close();
  await ts?.dispose();
});

async function callNumber(number: string, path: string) {
  const bought = await ts.request('POST', `${API}/Accounts/${owner.sid}/IncomingPhoneNumbers.json`, {
    auth: owner.creds,
    form: { PhoneNumber: number, VoiceUrl: `${hooks.origin}${path}` },
  });
  expect(bought.status).toBe(201);
  const r = await runSipp({ scenario: 'uac-call-expect-any-end.xml', remote: target, service: number });
  expect(r.errors).toBe('');
  const call = await until(
    async () =>
      (
        await ts.request('GET', `${API}/Accounts/${owner.sid}/Calls.json?To=${encodeURIComponent(number)}`, {
          auth: owner.creds,
        })
      ).json.calls[0],
    (c) => c?.status === 'canceled',
  );
  expect(call.status).toBe('canceled');
  return call.sid as string;
}

async function notificationsOf(callSid: string, code: number) {
  return until(
    async () =>
      (
        await ts.request('GET', `${API}/Accounts/${owner.sid}/Calls/${callSid}/Notifications.json`, {
          auth: owner.creds,
        })
      ).json.notifications as Array<{ sid: string; error_code: string | number; call_sid: string }>,
    (l) => l.some((n) => Number(n.error_code) === code),
  );
}

describe('a webhook response holding NUL bytes', () => {
  it('a markup document with NUL: Notification 12100 for the call, the body kept with ␀, the call refused', async () => {
    hooks.script('/nul-doc', {
      status: 200,
      headers: { 'Content-Type': 'text/xml' },
      body: Buffer.from('<?xml version="1.0"?><Response><Say>a\u0000b</Say></Response>', 'utf8'),
    });
    const sid = await callNumber('+15550400001', '/nul-doc');
    const notes = await notificationsOf(sid, 12100);
    const note = notes.find((n) => Number(n.error_code) === 12100);
    expect(note?.call_sid).toBe(sid);
    const full = await ts.request('GET', `${API}/Accounts/${owner.sid}/Notifications/${note!.sid}.json`, {
      auth: owner.creds,
    });
    expect(full.status).toBe(200);
    expect(full.json.response_body).toContain('a\u2400b');
    expect(full.text).not.toContain('\\u0000');
  });

  it('an HTTP error page with NUL: Notification 11200 for the call, stored', async () => {
    hooks.script('/nul-500', {
      status: 500,
      headers: { 'Content-Type': 'text/html' },
      body: 'oops\u0000oops',
    });
    const sid = await callNumber('+15550400002', '/nul-500');
    const notes = await notificationsOf(sid, 11200);
    expect(notes.some((n) => Number(n.error_code) === 11200)).toBe(true);
  });
});
