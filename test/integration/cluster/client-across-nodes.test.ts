/**
 * Clients across nodes: two nodes on one Postgres and Redis; a real phone (baresip) registers over
 * TCP to node A and keeps that connection. A call that lands on node B and dials the client reaches
 * it through A (flow-token Route, A relays over the phone's connection, Record-Route keeps A on the
 * path of ACK and BYE); the phone answers, its audio reaches B's media (recorded), and a BYE from
 * either side ends both legs. An SMS sent through B reaches the phone as a SIP MESSAGE over A's
 * connection. A forged flow token gets 403, a good token for a connection A does not hold 430.
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Baresip } from '../../support/baresip.js';
import { API, type Credentials, startTestServer, type TestServer } from '../../support/server.js';
import { SipPeer, sipRequest, statusOf } from '../../support/sip-peer.js';
import { wsClient } from '../../support/sip-ws-client.js';
import { startSipp } from '../../support/sipp.js';
import { until, markup as xml } from '../../support/until.js';
import { startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';

let a: TestServer;
let b: TestServer;
let hooks: WebhookServer;
let owner: { sid: string; creds: Credentials };
let phone: Baresip;
let aPort: number;
let bTarget: string;

const formsTo = (path: string) =>
  hooks.requestsTo(path).map((q) => new URLSearchParams(q.rawBody.toString()));

async function numberFor(path: string, number: string): Promise<void> {
  const n = await b.request('POST', `${API}/Accounts/${owner.sid}/IncomingPhoneNumbers.json`, {
    auth: owner.creds,
    form: { PhoneNumber: number, VoiceUrl: `${hooks.origin}${path}` },
  });
  expect(n.status).toBe(201);
}

async function childCall(parentSid: string) {
  return until(
    async () =>
      (
        await b.request(
          'GET',
          `${API}/Accounts/${owner.sid}/Calls.json?ParentCallSid=${encodeURIComponent(parentSid)}`,
          { auth: owner.creds },
        )
      ).json.calls?.[0],
    (c) => c?.status === 'completed',
    15_000,
  );
}

beforeAll(async () => {
  a = await startTestServer({ label: 'clientnodes', env: { SIP_WS_PORT: '0' } });
  b = await startTestServer({ ns: a.ns, env: { SIP_WS_PORT: '0' } });
  hooks = await startWebhookServer();
  const r = await a.request('POST', `${API}/Accounts.json`, {
    auth: a.admin,
    form: { EmailAddress: 'roaming@example.test', Password: 'password-123', Role: 'Developer' },
  });
  owner = { sid: r.json.sid, creds: { user: r.json.sid, secret: r.json.auth_token } };
  const c = await a.request('POST', `${API}/Accounts/${owner.sid}/Clients.json`, {
    auth: owner.creds,
    form: { Login: 'carol', Password: 'carol-secret-1' },
  });
  expect(c.status).toBe(201);
  aPort = a.server.sip!.stack.port;
  bTarget = `127.0.0.1:${b.server.sip!.stack.port}`;
  phone = new Baresip({
    aor: `sip:carol@127.0.0.1:${aPort};transport=tcp`,
    password: 'carol-secret-1',
    regint: 600,
    answermode: 'auto',
    audioSource: resolve(import.meta.dirname, '../../fixtures/media/prompt-8k.wav'),
    maxSeconds: 180,
  });
  await phone.start();
  const domain = a.server.config.organization.defaultDomain;
  const [binding] = await until(
    () => b.server.sip!.registrar.locate('carol', domain),
    (l) => l.length === 1,
  );
  // Registered over TCP to A: B sees the binding, and that A holds its connection.
  expect(binding?.flow).toMatchObject({ protocol: 'TCP', node: { address: '127.0.0.1', port: aPort } });
  expect(b.server.sip!.flows.isLocal(binding!.flow)).toBe(false);
  expect(a.server.sip!.flows.isLocal(binding!.flow)).toBe(true);
  // Two servers (a fresh database's migrations), a phone: far longer than a test on a loaded machine.
}, 90_000);
afterAll(async () => {
  await phone?.stop();
  await hooks?.close();
  await b?.stop();
  await a?.dispose();
});

describe('a TCP client registered on node A, called from node B', () => {
  it('<Dial><Client> on B reaches the phone through A; it answers, audio flows, its BYE ends both legs', async () => {
    hooks.script(
      '/dial-carol',
      xml('<Dial action="/dialed" timeout="10" record="record-from-answer"><Client>carol</Client></Dial>'),
    );
    hooks.script('/dialed', xml('<Hangup/>'));
    await numberFor('/dial-carol', '+15550410001');
    const relayed = a.server.sip!.flows.counters.relayed;
    const established = phone.events.filter((e) => e.type === 'CALL_ESTABLISHED').length;
    const closed = phone.events.filter((e) => e.type === 'CALL_CLOSED').length;
    const caller = await startSipp({
      scenario: 'uac-call-expect-bye.xml',
      remote: bTarget,
      service: '+15550410001',
      timeoutSeconds: 30,
    });
    await phone.waitForEvent('CALL_ESTABLISHED', 10_000, established + 1);
    // Let the phone's prompt play into the bridge for a while, then the phone hangs up.
    await new Promise((r) => setTimeout(r, 2500));
    await phone.command('hangup');
    await phone.waitForEvent('CALL_CLOSED', 10_000, closed + 1);
    // The caller gets B's BYE and answers it 200 (sipp exits 0 only then).
    const result = await caller.done;
    expect(result.errors, result.errors).toBe('');
    expect(result.code).toBe(0);

    const [dialed] = await until(
      async () => formsTo('/dialed'),
      (l) => l.length > 0,
    );
    expect(dialed?.get('DialCallStatus')).toBe('completed');
    // The caller sends no audio: speech in the recording is the phone's, relayed by nobody (RTP goes
    // straight to B's media engine) but set up through A.
    expect(Number(dialed?.get('RecordingDuration'))).toBeGreaterThanOrEqual(1);
    const wav = Buffer.from(await (await fetch(`${dialed!.get('RecordingUrl')}.wav`)).arrayBuffer());
    expect(wav.subarray(0, 4).toString()).toBe('RIFF');
    const samples = new Int16Array(wav.buffer, wav.byteOffset + 44, (wav.length - 44) >> 1);
    let energy = 0;
    for (const v of samples) energy += v * v;
    expect(Math.sqrt(energy / samples.length)).toBeGreaterThan(300);

    const parent = await until(
      async () =>
        (
          await b.request('GET', `${API}/Accounts/${owner.sid}/Calls/${dialed!.get('CallSid')}.json`, {
            auth: owner.creds,
          })
        ).json,
      (c) => c.status === 'completed',
    );
    expect(parent.status).toBe('completed');
    const child = await childCall(dialed!.get('CallSid')!);
    expect(child).toMatchObject({ direction: 'outbound-dial', to: 'client:carol', status: 'completed' });
    // INVITE, ACK and the phone's BYE crossed A.
    expect(a.server.sip!.flows.counters.relayed - relayed).toBeGreaterThanOrEqual(3);
  }, 60_000);

  it('the caller hangs up on B: B’s BYE reaches the phone through A and both legs complete', async () => {
    hooks.script('/dial-carol-2', xml('<Dial timeout="10"><Client>carol</Client></Dial>'));
    await numberFor('/dial-carol-2', '+15550410002');
    const established = phone.events.filter((e) => e.type === 'CALL_ESTABLISHED').length;
    const closed = phone.events.filter((e) => e.type === 'CALL_CLOSED').length;
    const caller = await startSipp({
      scenario: 'uac-call-then-hangup.xml',
      remote: bTarget,
      service: '+15550410002',
      timeoutSeconds: 30,
      extra: ['-d', '2000'],
    });
    await phone.waitForEvent('CALL_ESTABLISHED', 10_000, established + 1);
    // The caller's BYE got its 200 from B.
    const result = await caller.done;
    expect(result.errors, result.errors).toBe('');
    expect(result.code).toBe(0);
    // The phone got B's BYE (relayed by A over its TCP connection).
    await phone.waitForEvent('CALL_CLOSED', 10_000, closed + 1);
    const calls = await until(
      async () =>
        (
          await b.request('GET', `${API}/Accounts/${owner.sid}/Calls.json?To=client%3Acarol`, {
            auth: owner.creds,
          })
        ).json.calls as Array<{ status: string; parent_call_sid: string }>,
      (l) => l.length >= 2 && l.every((c) => c.status === 'completed'),
      15_000,
    );
    const parentSid = calls[0]!.parent_call_sid;
    // The caller's record is written when its leg ends, a moment after the BYE was answered.
    const parent = await until(
      async () =>
        (
          await b.request('GET', `${API}/Accounts/${owner.sid}/Calls/${parentSid}.json`, {
            auth: owner.creds,
          })
        ).json,
      (c) => c.status === 'completed',
    );
    expect(parent.status).toBe('completed');
  }, 60_000);

  it('a Dial timeout on B cancels the ringing phone through A: CANCEL relayed, no-answer', async () => {
    const c = await a.request('POST', `${API}/Accounts/${owner.sid}/Clients.json`, {
      auth: owner.creds,
      form: { Login: 'dave', Password: 'dave-secret-1' },
    });
    expect(c.status).toBe(201);
    const ringing = new Baresip({
      aor: `sip:dave@127.0.0.1:${aPort};transport=tcp`,
      password: 'dave-secret-1',
      regint: 600,
      answermode: 'manual',
      maxSeconds: 60,
    });
    try {
      await ringing.start();
      const domain = a.server.config.organization.defaultDomain;
      const bound = await until(
        () => b.server.sip!.registrar.locate('dave', domain),
        (l) => l.length === 1,
      );
      expect(bound[0]?.flow.protocol).toBe('TCP');
      hooks.script('/dial-dave', xml('<Dial action="/dialed-dave" timeout="5"><Client>dave</Client></Dial>'));
      hooks.script('/dialed-dave', xml('<Hangup/>'));
      await numberFor('/dial-dave', '+15550410004');
      const caller = await startSipp({
        scenario: 'uac-call-expect-bye.xml',
        remote: bTarget,
        service: '+15550410004',
        timeoutSeconds: 30,
      });
      await ringing.waitForEvent('CALL_INCOMING', 10_000);
      // Nobody answers: B's ring timeout CANCELs through A, the phone stops ringing.
      await ringing.waitForEvent('CALL_CLOSED', 15_000);
      const result = await caller.done;
      expect(result.errors, result.errors).toBe('');
      expect(result.code).toBe(0);
      const [dialed] = await until(
        async () => formsTo('/dialed-dave'),
        (l) => l.length > 0,
      );
      expect(dialed?.get('DialCallStatus')).toBe('no-answer');
      expect(ringing.events.some((e) => e.type === 'CALL_ESTABLISHED')).toBe(false);
    } finally {
      await ringing.stop();
    }
  }, 60_000);

  it('an SMS to client:carol sent through B arrives as a SIP MESSAGE over A’s connection', async () => {
    await numberFor('/unused', '+15550410003');
    const relayed = a.server.sip!.flows.counters.relayed;
    const sent = await b.request('POST', `${API}/Accounts/${owner.sid}/SMS/Messages.json`, {
      auth: owner.creds,
      form: { From: '+15550410003', To: 'client:carol', Body: 'hello carol across nodes' },
    });
    expect(sent.status).toBe(201);
    const m = await until(
      async () =>
        (
          await b.request('GET', `${API}/Accounts/${owner.sid}/SMS/Messages/${sent.json.sid}.json`, {
            auth: owner.creds,
          })
        ).json,
      (x) => x.status !== 'sending' && x.status !== 'queued',
      15_000,
    );
    // Sent: the phone answered the MESSAGE 2xx, through A (the one request A relayed meanwhile).
    expect(m.status).toBe('sent');
    expect(a.server.sip!.flows.counters.relayed - relayed).toBe(1);
  }, 30_000);
});

describe('a WS client registered on node A', () => {
  it('gets an SMS sent through B over its WebSocket on A, and its 200 makes the SMS sent', async () => {
    const c = await a.request('POST', `${API}/Accounts/${owner.sid}/Clients.json`, {
      auth: owner.creds,
      form: { Login: 'webby', Password: 'webby-secret-1' },
    });
    expect(c.status).toBe(201);
    const client = await wsClient(a.server.sip!.bound!.ws as number, 'webby', 'webby-secret-1');
    try {
      expect(client.ok).toMatch(/^SIP\/2\.0 200/);
      const domain = a.server.config.organization.defaultDomain;
      const [binding] = await b.server.sip!.registrar.locate('webby', domain);
      expect(binding?.flow).toMatchObject({ protocol: 'WS', node: { address: '127.0.0.1', port: aPort } });
      await numberFor('/unused-ws', '+15550410005');
      const sent = await b.request('POST', `${API}/Accounts/${owner.sid}/SMS/Messages.json`, {
        auth: owner.creds,
        form: { From: '+15550410005', To: 'client:webby', Body: 'over the websocket' },
      });
      expect(sent.status).toBe(201);
      const message = await client.next((m) => m.startsWith('MESSAGE '));
      expect(message).toContain('over the websocket');
      // Relayed by A: its Via on top of B's (B's own sends carry one Via).
      expect(message.match(/^Via:/gim)).toHaveLength(2);
      client.answer(message, '200 OK');
      const m = await until(
        async () =>
          (
            await b.request('GET', `${API}/Accounts/${owner.sid}/SMS/Messages/${sent.json.sid}.json`, {
              auth: owner.creds,
            })
          ).json,
        (x) => x.status !== 'sending' && x.status !== 'queued',
        15_000,
      );
      expect(m.status).toBe('sent');

      // The client knows its token (Record-Route shows it) but may not open new requests with it:
      // through A they would skip digest authentication and the call runtime.
      const token = await a.server.sip!.flows.tokens.sign(binding!.flow);
      client.ws.send(
        [
          'INVITE sip:+15550000999@198.51.100.7 SIP/2.0',
          'Via: SIP/2.0/WS webby.invalid;branch=z9hG4bKwsfraud1',
          'From: <sip:webby@127.0.0.1>;tag=fraud',
          'To: <sip:+15550000999@198.51.100.7>',
          'Call-ID: ws-fraud-1',
          'CSeq: 1 INVITE',
          `Route: <sip:127.0.0.1:${aPort};lr;sb-flow=${token}>`,
          'Contact: <sip:webby@webby.invalid;transport=ws>',
          'Max-Forwards: 70',
          'Content-Length: 0',
          '',
          '',
        ].join('\r\n'),
      );
      const refused = await client.next((r) => r.includes('ws-fraud-1') && /^SIP\/2\.0 [2-6]/.test(r));
      expect(refused).toMatch(/^SIP\/2\.0 403 Flow Token Not For New Requests/);
    } finally {
      client.ws.close();
    }
  }, 30_000);
});

describe('flow tokens on node A', () => {
  it('a forged token gets 403, a good token for a connection A does not hold 430, and A lives on', async () => {
    const peer = await SipPeer.open('127.0.0.2');
    peer.autoAck = true;
    try {
      const good = await a.server.sip!.flows.tokens.sign({ protocol: 'TCP', address: '127.0.0.9', port: 9 });
      const forged = `${good.split('.')[0]}.${Buffer.alloc(12, 7).toString('base64url')}`;
      const cases: Array<[string, number]> = [
        [forged, 403],
        ['not-a-token', 403],
        [good, 430],
      ];
      for (const [token, status] of cases) {
        for (const method of ['INVITE', 'MESSAGE']) {
          const rq = sipRequest(aPort, {
            method,
            uri: 'sip:carol@127.0.0.9:9;transport=tcp',
            extra: [`Route: <sip:127.0.0.1:${aPort};lr;sb-flow=${token}>`],
            ...(method === 'MESSAGE' ? { body: 'hi', contentType: 'text/plain' } : {}),
          });
          peer.send(rq.text, aPort);
          const final = await peer.final(rq.branch);
          expect(final && statusOf(final), `${method} with ${token.slice(0, 12)}…`).toBe(status);
        }
      }
      expect(a.server.sip!.flows.counters.forged).toBeGreaterThanOrEqual(4);
      expect(a.server.sip!.flows.counters.failed).toBeGreaterThanOrEqual(2);
      // Still serving: an OPTIONS probe gets 200.
      const probe = sipRequest(aPort);
      peer.send(probe.text, aPort);
      expect(statusOf((await peer.final(probe.branch)) ?? '')).toBe(200);
    } finally {
      peer.close();
    }
  });
});
