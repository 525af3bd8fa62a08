/**
 * `<Dial><Number>` through the platform's outbound proxy, with a second Switchboard as the carrier:
 * sipp calls node A, whose markup dials a number hosted on node B (A's SIP_OUTBOUND_PROXY). B answers
 * with a Gather; A sends the Number's `sendDigits` once B answered, and B's Gather must post them.
 * The caller's own DTMF crosses A's bridge to B the same way (the media path caller → callee).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, type Credentials, startTestServer, type TestServer } from '../../support/server.js';
import { runSipp } from '../../support/sipp.js';
import { until, markup as xml } from '../../support/until.js';
import { startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';

let a: TestServer;
let b: TestServer;
let hooks: WebhookServer;

/** A Developer account on `ts` and a number of it whose VoiceUrl is `path` on the webhook server. */
async function numberOn(ts: TestServer, email: string, number: string, path: string) {
  const r = await ts.request('POST', `${API}/Accounts.json`, {
    auth: ts.admin,
    form: { EmailAddress: email, Password: 'password-123', Role: 'Developer' },
  });
  const creds: Credentials = { user: r.json.sid, secret: r.json.auth_token };
  const n = await ts.request('POST', `${API}/Accounts/${r.json.sid}/IncomingPhoneNumbers.json`, {
    auth: creds,
    form: { PhoneNumber: number, VoiceUrl: `${hooks.origin}${path}` },
  });
  expect(n.status).toBe(201);
  return { sid: r.json.sid as string, creds };
}

beforeAll(async () => {
  hooks = await startWebhookServer();
  // Node B, the "carrier", on its own loopback address.
  b = await startTestServer({ label: 'dialnumb', env: { SIP_HOST: '127.0.0.4' } });
  // Node A on another address: B treats From hosts of its own addresses (127.0.0.1 included) as its
  // clients' domain and would challenge the INVITE.
  a = await startTestServer({
    label: 'dialnuma',
    env: { SIP_HOST: '127.0.0.5', SIP_OUTBOUND_PROXY: `sip:127.0.0.4:${b.server.sip!.stack.port}` },
  });
});
afterAll(async () => {
  await hooks?.close();
  await a?.dispose();
  await b?.dispose();
});

describe('<Dial><Number> through the outbound proxy', () => {
  it('reaches the number on the other node and sends sendDigits once it answered', async () => {
    hooks.script('/b-answer', xml('<Gather action="/b-got" numDigits="2" timeout="10"/><Hangup/>'));
    hooks.script('/b-got', xml('<Hangup/>'));
    hooks.script(
      '/a-dial',
      xml('<Dial action="/a-dialed" timeout="10"><Number sendDigits="w12">+15550400001</Number></Dial>'),
    );
    hooks.script('/a-dialed', xml('<Hangup/>'));
    const carrier = await numberOn(b, 'carrier@example.test', '+15550400001', '/b-answer');
    const caller = await numberOn(a, 'caller@example.test', '+15550400002', '/a-dial');
    const r = await runSipp({
      scenario: 'uac-call-expect-bye.xml',
      remote: `127.0.0.5:${a.server.sip!.stack.port}`,
      service: '+15550400002',
    });
    expect(r.errors).toBe('');
    const got = await until(
      () => hooks.requestsTo('/b-got').map((q) => new URLSearchParams(q.rawBody.toString())),
      (l) => l.length > 0,
    );
    expect(got[0]!.get('Digits')).toBe('12');
    expect(got[0]!.get('AccountSid')).toBe(carrier.sid);
    const [dialed] = hooks.requestsTo('/a-dialed').map((q) => new URLSearchParams(q.rawBody.toString()));
    expect(dialed?.get('DialCallStatus')).toBe('completed');
    expect(dialed?.get('AccountSid')).toBe(caller.sid);
    const child = await a.request(
      'GET',
      `${API}/Accounts/${caller.sid}/Calls/${dialed!.get('DialCallSid')}.json`,
      { auth: caller.creds },
    );
    expect(child.json).toMatchObject({ direction: 'outbound-dial', to: '+15550400001' });
  });

  it("carries the caller's DTMF across the Dial bridge to the called party (RFC 4733 relay)", async () => {
    hooks.script('/b-ivr', xml('<Gather action="/b-ivr-got" finishOnKey="#" timeout="10"/><Hangup/>'));
    hooks.script('/b-ivr-got', xml('<Hangup/>'));
    hooks.script('/a-ivr', xml('<Dial timeout="10"><Number>+15550400011</Number></Dial><Hangup/>'));
    await numberOn(b, 'ivr@example.test', '+15550400011', '/b-ivr');
    await numberOn(a, 'ivr-caller@example.test', '+15550400012', '/a-ivr');
    // The caller presses 1 then # (from a pcap, 1.5 s after its ACK): they cross A's bridge to B.
    const r = await runSipp({
      scenario: 'uac-call-dtmf-expect-bye.xml',
      remote: `127.0.0.5:${a.server.sip!.stack.port}`,
      service: '+15550400012',
      extra: ['-mi', '127.0.0.2'],
    });
    expect(r.errors).toBe('');
    const [got] = hooks.requestsTo('/b-ivr-got').map((q) => new URLSearchParams(q.rawBody.toString()));
    expect(got?.get('Digits')).toBe('1');
  });
});
