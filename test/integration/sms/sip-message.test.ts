/**
 * Messaging over SIP with real peers: an SMS to `client:<login>` goes out as a
 * SIP MESSAGE to the client's registered contact (sipp registers, then receives it); a SIP MESSAGE
 * from a carrier to a hosted number runs the number's SmsUrl like an SMPP MO (202 Accepted).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, type Credentials, startTestServer, type TestServer } from '../../support/server.js';
import { freePort, runSipp, startSipp } from '../../support/sipp.js';
import { until } from '../../support/until.js';
import { startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';

let ts: TestServer;
let hooks: WebhookServer;
let owner: { sid: string; creds: Credentials };
let target: string;

beforeAll(async () => {
  ts = await startTestServer({ label: 'sipmsg' });
  hooks = await startWebhookServer();
  hooks.script('/sms', { status: 200, headers: { 'Content-Type': 'text/xml' }, body: '<Response/>' });
  const r = await ts.request('POST', `${API}/Accounts.json`, {
    auth: ts.admin,
    form: { EmailAddress: 'texter@example.test', Password: 'password-123', Role: 'Developer' },
  });
  owner = { sid: r.json.sid, creds: { user: r.json.sid, secret: r.json.auth_token } };
  target = `127.0.0.1:${ts.server.sip!.stack.port}`;
  const n = await ts.request('POST', `${API}/Accounts/${owner.sid}/IncomingPhoneNumbers.json`, {
    auth: owner.creds,
    form: { PhoneNumber: '+15550500001', SmsUrl: `${hooks.origin}/sms` },
  });
  expect(n.status).toBe(201);
});
afterAll(async () => {
  await hooks?.close();
  await ts?.dispose();
});

describe('SMS over SIP MESSAGE', () => {
  it('an SMS to client:dave reaches the registered client as a SIP MESSAGE', async () => {
    const c = await ts.request('POST', `${API}/Accounts/${owner.sid}/Clients.json`, {
      auth: owner.creds,
      form: { Login: 'dave', Password: 'dave-secret-1' },
    });
    expect(c.status).toBe(201);
    const port = await freePort('127.0.0.3');
    const reg = await runSipp({
      scenario: 'uac-register-expect-200.xml',
      remote: target,
      service: 'dave',
      localIp: '127.0.0.3',
      localPort: port,
      auth: { user: 'dave', password: 'dave-secret-1' },
      keys: { expires: '300' },
    });
    expect(reg.errors).toBe('');
    const phone = await startSipp({
      scenario: 'uas-message-expect-200.xml',
      localIp: '127.0.0.3',
      localPort: port,
      keys: { text: 'hello dave' },
    });
    const sent = await ts.request('POST', `${API}/Accounts/${owner.sid}/SMS/Messages.json`, {
      auth: owner.creds,
      form: { From: '+15550500001', To: 'client:dave', Body: 'hello dave' },
    });
    expect(sent.status).toBe(201);
    const r = await phone.done;
    expect(r.errors).toBe('');
    expect(r.code).toBe(0);
    const m = await until(
      async () =>
        (
          await ts.request('GET', `${API}/Accounts/${owner.sid}/SMS/Messages/${sent.json.sid}.json`, {
            auth: owner.creds,
          })
        ).json,
      (x) => x.status !== 'sending' && x.status !== 'queued',
    );
    expect(m.status).not.toBe('failed');
  });

  it('a SIP MESSAGE to a hosted number runs its SmsUrl (202)', async () => {
    const r = await runSipp({
      scenario: 'uac-message-expect-202.xml',
      remote: target,
      service: '+15550500001',
    });
    expect(r.errors).toBe('');
    const [form] = await until(
      () => hooks.requestsTo('/sms').map((q) => new URLSearchParams(q.rawBody.toString())),
      (l) => l.length > 0,
    );
    expect(form?.get('Body')).toContain('hello from sip');
    expect(form?.get('To')).toBe('+15550500001');
    expect(form?.get('From')).toBe('+15550009999');
  });
});
