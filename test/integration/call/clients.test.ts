/**
 * Calls with a real SIP phone (baresip) registered as a Client (Dial to a
 * registered baresip client): a caller's `<Dial><Client>` reaches the phone, which answers; a REST
 * call to `client:name` rings it; and a call from the phone to a number runs the number's markup
 * with the client's account on the call record.
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Baresip } from '../../support/baresip.js';
import { API, type Credentials, startTestServer, type TestServer } from '../../support/server.js';
import { startSipp } from '../../support/sipp.js';
import { until, markup as xml } from '../../support/until.js';
import { startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';

let ts: TestServer;
let hooks: WebhookServer;
let owner: { sid: string; creds: Credentials };
let phone: Baresip;
let target: string;

beforeAll(async () => {
  ts = await startTestServer({ label: 'clientcalls' });
  hooks = await startWebhookServer();
  const r = await ts.request('POST', `${API}/Accounts.json`, {
    auth: ts.admin,
    form: { EmailAddress: 'phones@example.test', Password: 'password-123', Role: 'Developer' },
  });
  owner = { sid: r.json.sid, creds: { user: r.json.sid, secret: r.json.auth_token } };
  const c = await ts.request('POST', `${API}/Accounts/${owner.sid}/Clients.json`, {
    auth: owner.creds,
    form: { Login: 'carol', Password: 'carol-secret-1' },
  });
  expect(c.status).toBe(201);
  target = `127.0.0.1:${ts.server.sip!.stack.port}`;
  phone = new Baresip({
    aor: `sip:carol@${target};transport=udp`,
    password: 'carol-secret-1',
    regint: 600,
    answermode: 'auto',
    audioSource: resolve(import.meta.dirname, '../../fixtures/media/prompt-8k.wav'),
    maxSeconds: 120,
  });
  await phone.start();
  const domain = ts.server.config.organization.defaultDomain;
  await until(
    () => ts.server.sip!.registrar.locate('carol', domain),
    (b) => b.length === 1,
  );
});
afterAll(async () => {
  await phone?.stop();
  await hooks?.close();
  await ts?.dispose();
});

describe('calls with a registered baresip client', () => {
  it('<Dial><Client> from a caller reaches the phone, which answers; DialCallStatus completed', async () => {
    hooks.script('/dial-carol', xml('<Dial action="/dialed" timeout="10"><Client>carol</Client></Dial>'));
    hooks.script('/dialed', xml('<Hangup/>'));
    const number = '+15550400001';
    const n = await ts.request('POST', `${API}/Accounts/${owner.sid}/IncomingPhoneNumbers.json`, {
      auth: owner.creds,
      form: { PhoneNumber: number, VoiceUrl: `${hooks.origin}/dial-carol` },
    });
    expect(n.status).toBe(201);
    const established = phone.events.filter((e) => e.type === 'CALL_ESTABLISHED').length;
    const caller = await startSipp({ scenario: 'uac-call-expect-bye.xml', remote: target, service: number });
    await phone.waitForEvent('CALL_ESTABLISHED', 5000, established + 1);
    // The phone hangs up: the Dial completes, its action answers Hangup, the caller gets BYE.
    await new Promise((r) => setTimeout(r, 500));
    await phone.command('hangup');
    const r = await caller.done;
    expect(r.errors).toBe('');
    expect(r.code).toBe(0);
    const [dialed] = hooks.requestsTo('/dialed').map((q) => new URLSearchParams(q.rawBody.toString()));
    expect(dialed?.get('DialCallStatus')).toBe('completed');
    expect(Number(dialed?.get('DialCallDuration'))).toBeGreaterThanOrEqual(0);
    const children = (
      await ts.request('GET', `${API}/Accounts/${owner.sid}/Calls.json?To=client%3Acarol`, {
        auth: owner.creds,
      })
    ).json.calls;
    expect(children[0]).toMatchObject({ direction: 'outbound-dial', to: 'client:carol' });
  });

  it('a REST call to client:carol rings the phone and is answered', async () => {
    hooks.script('/rest-carol', xml('<Pause length="1"/><Hangup/>'));
    const established = phone.events.filter((e) => e.type === 'CALL_ESTABLISHED').length;
    const r = await ts.request('POST', `${API}/Accounts/${owner.sid}/Calls.json`, {
      auth: owner.creds,
      form: { From: '+15550400009', To: 'client:carol?X-Ticket=42', Url: `${hooks.origin}/rest-carol` },
    });
    expect(r.status).toBe(201);
    await phone.waitForEvent('CALL_ESTABLISHED', 5000, established + 1);
    const call = await until(
      async () =>
        (
          await ts.request('GET', `${API}/Accounts/${owner.sid}/Calls/${r.json.sid}.json`, {
            auth: owner.creds,
          })
        ).json,
      (c) => c.status === 'completed',
    );
    expect(call.status).toBe('completed');
  });

  it('the phone calls a number: digest-authenticated, the markup runs, the record has the client account', async () => {
    hooks.script('/from-phone', xml('<Say>Hello Carol</Say><Hangup/>'));
    const number = '+15550400002';
    await ts.request('POST', `${API}/Accounts/${owner.sid}/IncomingPhoneNumbers.json`, {
      auth: owner.creds,
      form: { PhoneNumber: number, VoiceUrl: `${hooks.origin}/from-phone` },
    });
    const closed = phone.events.filter((e) => e.type === 'CALL_CLOSED').length;
    await phone.command('dial', `sip:${number}@${target}`);
    await phone.waitForEvent('CALL_CLOSED', 15_000, closed + 1);
    const [form] = hooks.requestsTo('/from-phone').map((q) => new URLSearchParams(q.rawBody.toString()));
    expect(form?.get('From')).toBe('client:carol');
    expect(form?.get('AccountSid')).toBe(owner.sid);
    // The record's last update is group-committed with other calls' (a few ms after the BYE).
    const calls = await until(
      async () =>
        (
          await ts.request(
            'GET',
            `${API}/Accounts/${owner.sid}/Calls.json?To=${encodeURIComponent(number)}`,
            {
              auth: owner.creds,
            },
          )
        ).json.calls,
      (c) => c[0]?.status === 'completed',
      5_000,
    );
    expect(calls[0]).toMatchObject({ direction: 'inbound', from: 'client:carol', status: 'completed' });
  });
});
