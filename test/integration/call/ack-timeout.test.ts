/**
 * RFC 3261 §13.3.1.4: a caller that never ACKs our 2xx. The 200 is retransmitted (T1 doubling up to
 * T2) and, after 64·T1 = 32 s without an ACK, the call is ended with a BYE and recorded completed.
 * And §15: a call hung up before the caller's late ACK sends its BYE once the ACK arrives.
 * Its own file: it takes over half a minute and runs beside the others.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, type Credentials, startTestServer, type TestServer } from '../../support/server.js';
import { runSipp } from '../../support/sipp.js';
import { until, markup as xml } from '../../support/until.js';
import { startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';

let ts: TestServer;
let hooks: WebhookServer;
let owner: { sid: string; creds: Credentials };

beforeAll(async () => {
  ts = await startTestServer({ label: 'acktimeout' });
  hooks = await startWebhookServer();
  const r = await ts.request('POST', `${API}/Accounts.json`, {
    auth: ts.admin,
    form: { EmailAddress: 'noack@example.test', Password: 'password-123', Role: 'Developer' },
  });
  owner = { sid: r.json.sid, creds: { user: r.json.sid, secret: r.json.auth_token } };
});
afterAll(async () => {
  await hooks?.close();
  await ts?.dispose();
});

describe('2xx without an ACK', () => {
  it('retransmits the 200, then after 32 s sends BYE and records the call completed', async () => {
    hooks.script('/hold', xml('<Pause length="120"/>'));
    const number = '+15550600001';
    const n = await ts.request('POST', `${API}/Accounts/${owner.sid}/IncomingPhoneNumbers.json`, {
      auth: owner.creds,
      form: { PhoneNumber: number, VoiceUrl: `${hooks.origin}/hold` },
    });
    expect(n.status).toBe(201);
    const trace = join(mkdtempSync(join(tmpdir(), 'sb-noack-')), 'messages.log');
    const started = Date.now();
    const r = await runSipp({
      scenario: 'uac-call-no-ack-expect-bye.xml',
      remote: `127.0.0.1:${ts.server.sip!.stack.port}`,
      service: number,
      timeoutSeconds: 60,
      extra: ['-trace_msg', '-message_file', trace],
    });
    expect(r.errors).toBe('');
    expect(r.code).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(31_000);
    // sipp's message trace: the 200 to the INVITE arrived many times (T1, 2·T1, … capped at T2 = 4 s).
    const received = readFileSync(trace, 'utf8')
      .split(/^-{10,}.*$/m)
      .filter((m) => /message received/.test(m) && /SIP\/2\.0 200 OK/.test(m) && /CSeq: 1 INVITE/i.test(m));
    expect(received.length).toBeGreaterThanOrEqual(8);
    rmSync(dirname(trace), { recursive: true, force: true });
    const call = await until(
      async () =>
        (
          await ts.request('GET', `${API}/Accounts/${owner.sid}/Calls.json?To=%2B15550600001`, {
            auth: owner.creds,
          })
        ).json.calls[0],
      (c) => c?.status === 'completed',
    );
    expect(call).toMatchObject({ status: 'completed', direction: 'inbound' });
  }, 90_000);
});

describe('a hang-up before the ACK', () => {
  it('sends the BYE once the late ACK arrives', async () => {
    hooks.script('/wait', xml('<Pause length="30"/>'));
    const number = '+15550600002';
    const n = await ts.request('POST', `${API}/Accounts/${owner.sid}/IncomingPhoneNumbers.json`, {
      auth: owner.creds,
      form: { PhoneNumber: number, VoiceUrl: `${hooks.origin}/wait` },
    });
    expect(n.status).toBe(201);
    // The caller ACKs 2.5 s after the 200; the call is hung up through the API in between.
    const sipp = runSipp({
      scenario: 'uac-call-late-ack-expect-bye.xml',
      remote: `127.0.0.1:${ts.server.sip!.stack.port}`,
      service: number,
      timeoutSeconds: 30,
    });
    const list = `${API}/Accounts/${owner.sid}/Calls.json?To=%2B15550600002`;
    const answered = await until(
      async () => (await ts.request('GET', list, { auth: owner.creds })).json.calls[0],
      (c) => c?.status === 'in-progress',
    );
    const hangup = await ts.request('POST', `${API}/Accounts/${owner.sid}/Calls/${answered.sid}.json`, {
      auth: owner.creds,
      form: { Status: 'completed' },
    });
    expect(hangup.status).toBe(200);
    const r = await sipp;
    expect(r.errors).toBe('');
    expect(r.code).toBe(0);
    const call = await until(
      async () => (await ts.request('GET', list, { auth: owner.creds })).json.calls[0],
      (c) => c?.status === 'completed',
    );
    expect(call).toMatchObject({ status: 'completed', direction: 'inbound' });
  }, 60_000);
});
