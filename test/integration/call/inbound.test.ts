/**
 * Inbound calls from sipp to hosted numbers: markup fetched with the
 * documented parameters, Say/Pause/Hangup executed, Gather collecting DTMF from a sipp pcap, Record
 * creating a Recording whose .wav downloads, Dial to a sipp UAS, Reject busy → 486, a Redirect
 * chain, the fallback URL with a Notification, unknown numbers (404 / Notification 11005), the
 * number's StatusCallback, a BYE while a Gather runs, and an INVITE retransmitted after its 2xx
 * was acknowledged (absorbed: no second call, no answer).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, type Credentials, type TestServer } from '../../support/server.js';
import { SipPeer, statusOf } from '../../support/sip-peer.js';
import { runSipp, startSipp } from '../../support/sipp.js';
import { until, markup as xml } from '../../support/until.js';
import { startVoiceFixture, type VoiceFixture } from '../../support/voice-fixture.js';
import type { WebhookServer } from '../../support/webhook-server.js';

let fx: VoiceFixture;
let ts: TestServer;
let hooks: WebhookServer;
let owner: { sid: string; creds: Credentials };
let target: string;

beforeAll(async () => {
  fx = await startVoiceFixture('inbound', 'callee@example.test');
  ({ ts, hooks, owner, target } = fx);
});
afterAll(async () => {
  await fx?.dispose();
});

/** Buys a fresh number whose VoiceUrl is `path` on the webhook server. */
const numberFor = (path: string, extra: Record<string, string> = {}) =>
  fx.buyNumber('020', { VoiceUrl: `${hooks.origin}${path}`, ...extra });

const formsTo = (path: string) =>
  hooks.requestsTo(path).map((r) => new URLSearchParams(r.rawBody.toString()));

async function lastCall(to: string) {
  const r = await ts.request('GET', `${API}/Accounts/${owner.sid}/Calls.json?To=${encodeURIComponent(to)}`, {
    auth: owner.creds,
  });
  return r.json.calls[0];
}

describe('inbound calls to a number', () => {
  it('fetches the markup with the documented parameters, runs Say/Pause/Hangup, reports to StatusCallback', async () => {
    hooks.script('/say', xml('<Say>Hello from Switchboard</Say><Pause length="1"/><Hangup/>'));
    const n = await numberFor('/say', { StatusCallback: `${hooks.origin}/status` });
    const r = await runSipp({ scenario: 'uac-call-expect-bye.xml', remote: target, service: n.number });
    expect(r.errors).toBe('');
    expect(r.code).toBe(0);
    const [form] = formsTo('/say');
    expect(form).toBeDefined();
    const params = Object.fromEntries(form!.entries());
    expect(params).toMatchObject({
      AccountSid: owner.sid,
      To: n.number,
      From: 'sipp',
      CallStatus: 'ringing',
      Direction: 'inbound',
      ApiVersion: '2012-04-24',
    });
    expect(params.CallSid).toMatch(/^CA[0-9a-f]{32}$/);
    const call = await until(
      () => lastCall(n.number),
      (c) => c?.status === 'completed',
    );
    expect(call).toMatchObject({ status: 'completed', direction: 'inbound', phone_number_sid: n.sid });
    expect(call.duration).toBeGreaterThanOrEqual(1);
    const statuses = await until(
      () => formsTo('/status').filter((f) => f.get('CallSid') === params.CallSid),
      (l) => l.length >= 3,
    );
    expect(statuses.map((f) => f.get('CallStatus'))).toEqual(['ringing', 'in-progress', 'completed']);
    expect(statuses[0]!.get('InstanceId')).toBeTruthy();
  });

  it('Gather collects DTMF from a sipp pcap and posts Digits to its action', async () => {
    hooks.script(
      '/gather',
      xml(
        '<Gather action="/gathered" timeout="5" finishOnKey="#"><Say>Please press one then pound</Say></Gather><Hangup/>',
      ),
    );
    hooks.script('/gathered', xml('<Hangup/>'));
    const n = await numberFor('/gather');
    const r = await runSipp({
      scenario: 'uac-call-dtmf-expect-bye.xml',
      remote: target,
      service: n.number,
      extra: ['-mi', '127.0.0.2'],
    });
    expect(r.errors).toBe('');
    const gathered = formsTo('/gathered');
    expect(gathered).toHaveLength(1);
    expect(gathered[0]!.get('Digits')).toBe('1');
    expect(gathered[0]!.get('CallStatus')).toBe('in-progress');
  });

  it('Record creates a Recording whose .wav downloads', async () => {
    hooks.script('/record', xml('<Record action="/recorded" maxLength="4" timeout="0" playBeep="false"/>'));
    hooks.script('/recorded', xml('<Hangup/>'));
    const n = await numberFor('/record');
    const r = await runSipp({
      scenario: 'uac-call-audio-expect-bye.xml',
      remote: target,
      service: n.number,
      extra: ['-mi', '127.0.0.2'],
    });
    expect(r.errors).toBe('');
    const [form] = formsTo('/recorded');
    expect(form?.get('RecordingUrl')).toMatch(/\/Recordings\/RE[0-9a-f]{32}$/);
    expect(Number(form?.get('RecordingDuration'))).toBeGreaterThanOrEqual(2);
    const wav = await fetch(`${form!.get('RecordingUrl')}.wav`);
    expect(wav.status).toBe(200);
    const bytes = Buffer.from(await wav.arrayBuffer());
    expect(bytes.subarray(0, 4).toString()).toBe('RIFF');
    expect(bytes.length).toBeGreaterThan(8000 * 2 * 2);
  });

  it('Dial to a sipp UAS bridges the call and posts DialCallStatus to the action', async () => {
    const uas = await startSipp({ scenario: 'uas-answer-then-bye.xml', localIp: '127.0.0.3' });
    hooks.script(
      '/dial',
      xml(`<Dial action="/dialed" timeout="10"><Sip>sip:bob@127.0.0.3:${uas.localPort}</Sip></Dial>`),
    );
    hooks.script('/dialed', xml('<Hangup/>'));
    const n = await numberFor('/dial');
    const r = await runSipp({ scenario: 'uac-call-expect-bye.xml', remote: target, service: n.number });
    expect(r.errors).toBe('');
    expect((await uas.done).errors).toBe('');
    const [form] = formsTo('/dialed');
    expect(form?.get('DialCallStatus')).toBe('completed');
    expect(form?.get('DialCallSid')).toMatch(/^CA/);
    const child = await until(
      async () =>
        (
          await ts.request('GET', `${API}/Accounts/${owner.sid}/Calls/${form!.get('DialCallSid')}.json`, {
            auth: owner.creds,
          })
        ).json,
      (c) => c.status === 'completed',
    );
    expect(child).toMatchObject({ direction: 'outbound-dial', parent_call_sid: form!.get('CallSid') });
  });

  it('Dial record="record-from-answer" records both parties into a Recording of the parent call', async () => {
    // The caller sends no audio and the callee speaks: a recording of the caller's side alone would
    // be silence, so speech in the file shows the bridged party is recorded too.
    const uas = await startSipp({ scenario: 'uas-answer-audio-then-bye.xml', localIp: '127.0.0.3' });
    hooks.script(
      '/dial-record',
      xml(
        `<Dial action="/dialed-record" record="record-from-answer"><Sip>sip:bob@127.0.0.3:${uas.localPort}</Sip></Dial>`,
      ),
    );
    hooks.script('/dialed-record', xml('<Hangup/>'));
    const n = await numberFor('/dial-record');
    const r = await runSipp({ scenario: 'uac-call-expect-bye.xml', remote: target, service: n.number });
    expect(r.errors).toBe('');
    expect((await uas.done).errors).toBe('');
    const [form] = formsTo('/dialed-record');
    expect(form?.get('DialCallStatus')).toBe('completed');
    expect(form?.get('RecordingUrl')).toMatch(/\/Recordings\/RE[0-9a-f]{32}$/);
    expect(Number(form?.get('RecordingDuration'))).toBeGreaterThanOrEqual(3);
    const wav = Buffer.from(await (await fetch(`${form!.get('RecordingUrl')}.wav`)).arrayBuffer());
    expect(wav.subarray(0, 4).toString()).toBe('RIFF');
    const samples = new Int16Array(wav.buffer, wav.byteOffset + 44, (wav.length - 44) >> 1);
    let energy = 0;
    for (const v of samples) energy += v * v;
    expect(Math.sqrt(energy / samples.length)).toBeGreaterThan(300);
    const list = await ts.request(
      'GET',
      `${API}/Accounts/${owner.sid}/Calls/${form!.get('CallSid')}/Recordings.json`,
      { auth: owner.creds },
    );
    expect(list.json.recordings.map((x: { sid: string }) => x.sid)).toEqual([form!.get('RecordingSid')]);
  });

  it('Dial hangupOnStar: the caller pressing * hangs up the called party and the markup goes on', async () => {
    const uas = await startSipp({ scenario: 'uas-answer-expect-bye.xml', localIp: '127.0.0.3' });
    hooks.script(
      '/dial-star',
      xml(
        `<Dial action="/dialed-star" hangupOnStar="true"><Sip>sip:bob@127.0.0.3:${uas.localPort}</Sip></Dial>`,
      ),
    );
    hooks.script('/dialed-star', xml('<Hangup/>'));
    const n = await numberFor('/dial-star');
    const r = await runSipp({
      scenario: 'uac-call-star-expect-bye.xml',
      remote: target,
      service: n.number,
      extra: ['-mi', '127.0.0.2'],
    });
    expect(r.errors).toBe('');
    // The called party got our BYE (without hangupOnStar it would wait for one until it timed out).
    expect((await uas.done).errors).toBe('');
    const [form] = formsTo('/dialed-star');
    expect(form?.get('DialCallStatus')).toBe('completed');
    expect(Number(form?.get('DialCallDuration'))).toBeGreaterThanOrEqual(1);
  });

  it('Dial noun url (whisper) runs on the called party, then bridges; a whisper that hangs up bridges nothing', async () => {
    // Accepted: the whisper ends, the legs are bridged until the callee hangs up.
    const uas = await startSipp({ scenario: 'uas-answer-audio-then-bye.xml', localIp: '127.0.0.3' });
    hooks.script(
      '/whisper-dial',
      xml(
        `<Dial action="/whisper-dialed"><Sip url="/whisper">sip:bob@127.0.0.3:${uas.localPort}</Sip></Dial>`,
      ),
    );
    hooks.script('/whisper', xml('<Say>You have a call</Say>'));
    hooks.script('/whisper-dialed', xml('<Hangup/>'));
    const n = await numberFor('/whisper-dial');
    const r = await runSipp({ scenario: 'uac-call-expect-bye.xml', remote: target, service: n.number });
    expect(r.errors).toBe('');
    expect((await uas.done).errors).toBe('');
    const [dialed] = formsTo('/whisper-dialed');
    expect(dialed?.get('DialCallStatus')).toBe('completed');
    const [whisper] = formsTo('/whisper');
    expect(whisper?.get('CallSid')).toBe(dialed!.get('DialCallSid'));
    expect(whisper?.get('Direction')).toBe('outbound-dial');
    expect(whisper?.get('CallStatus')).toBe('in-progress');

    // Declined: the whisper hangs the callee up (it gets our BYE); the caller goes on to the action.
    const uas2 = await startSipp({ scenario: 'uas-answer-expect-bye.xml', localIp: '127.0.0.3' });
    hooks.script(
      '/screen-dial',
      xml(`<Dial action="/screened"><Sip url="/screen">sip:bob@127.0.0.3:${uas2.localPort}</Sip></Dial>`),
    );
    hooks.script('/screen', xml('<Hangup/>'));
    hooks.script('/screened', xml('<Hangup/>'));
    const n2 = await numberFor('/screen-dial');
    const r2 = await runSipp({ scenario: 'uac-call-expect-bye.xml', remote: target, service: n2.number });
    expect(r2.errors).toBe('');
    expect((await uas2.done).errors).toBe('');
    const [screened] = formsTo('/screened');
    expect(screened?.get('DialCallStatus')).toBe('completed');
    expect(formsTo('/screen')).toHaveLength(1);
  });

  it('Reject reason=busy → 486, and the call record says busy', async () => {
    hooks.script('/busy', xml('<Reject reason="busy"/>'));
    const n = await numberFor('/busy');
    const r = await runSipp({ scenario: 'uac-call-expect-486.xml', remote: target, service: n.number });
    expect(r.errors).toBe('');
    expect(
      await until(
        () => lastCall(n.number),
        (c) => c?.status === 'busy',
      ),
    ).toMatchObject({ status: 'busy' });
  });

  it('follows a Redirect chain', async () => {
    hooks.script('/r1', xml('<Redirect>/r2</Redirect>'));
    hooks.script('/r2', xml('<Redirect method="GET">/r3</Redirect>'));
    hooks.script('/r3', xml('<Pause length="1"/><Hangup/>'));
    const n = await numberFor('/r1');
    const r = await runSipp({ scenario: 'uac-call-expect-bye.xml', remote: target, service: n.number });
    expect(r.errors).toBe('');
    expect(hooks.requestsTo('/r2')).toHaveLength(1);
    expect(hooks.requestsTo('/r3').map((q) => q.method)).toEqual(['GET']);
  });

  it('uses the VoiceFallbackUrl when the primary fails, and writes a Notification', async () => {
    hooks.script('/broken', { status: 500, body: 'oops' });
    hooks.script('/fallback', xml('<Pause length="1"/><Hangup/>'));
    const n = await numberFor('/broken', { VoiceFallbackUrl: `${hooks.origin}/fallback` });
    const r = await runSipp({ scenario: 'uac-call-expect-bye.xml', remote: target, service: n.number });
    expect(r.errors).toBe('');
    expect(hooks.requestsTo('/fallback')).toHaveLength(1);
    const notes = await until(
      async () =>
        (await ts.request('GET', `${API}/Accounts/${owner.sid}/Notifications.json`, { auth: owner.creds }))
          .json.notifications as Array<{ request_url: string; error_code: string }>,
      (l) => l.some((x) => x.request_url.endsWith('/broken')),
    );
    expect(notes.some((x) => x.request_url.endsWith('/broken'))).toBe(true);
  });

  it('an unknown number → 404; a number without a voice URL → 404 and Notification 11005', async () => {
    const unknown = await runSipp({
      scenario: 'uac-call-expect-404.xml',
      remote: target,
      service: '+15559999999',
    });
    expect(unknown.errors).toBe('');
    const bare = await ts.request('POST', `${API}/Accounts/${owner.sid}/IncomingPhoneNumbers.json`, {
      auth: owner.creds,
      form: { PhoneNumber: '+15550209999' },
    });
    expect(bare.status).toBe(201);
    const r = await runSipp({ scenario: 'uac-call-expect-404.xml', remote: target, service: '+15550209999' });
    expect(r.errors).toBe('');
    const notes = await until(
      async () =>
        (
          await ts.request('GET', `${API}/Accounts/${owner.sid}/Notifications.json?ErrorCode=11005`, {
            auth: owner.creds,
          })
        ).json.notifications as unknown[],
      (l) => l.length > 0,
    );
    expect(notes.length).toBeGreaterThan(0);
  });

  it('a BYE while a Gather runs ends the call once (completed) and the action is never requested', async () => {
    hooks.script(
      '/slowgather',
      xml('<Gather action="/never" timeout="10"><Say>Say something long</Say></Gather>'),
    );
    const n = await numberFor('/slowgather');
    const r = await runSipp({
      scenario: 'uac-call-then-hangup.xml',
      remote: target,
      service: n.number,
      extra: ['-d', '1500'],
    });
    expect(r.errors).toBe('');
    expect(
      await until(
        () => lastCall(n.number),
        (c) => c?.status === 'completed',
      ),
    ).toMatchObject({ status: 'completed' });
    await new Promise((res) => setTimeout(res, 300));
    expect(hooks.requestsTo('/never')).toHaveLength(0);
  });
  it('an INVITE retransmitted after its 2xx was acknowledged is absorbed: no answer, no second call', async () => {
    hooks.script('/absorb', xml('<Pause length="5"/><Hangup/>'));
    const n = await numberFor('/absorb');
    const peer = await SipPeer.open('127.0.0.2');
    try {
      const [host, port] = target.split(':') as [string, string];
      const callId = `absorb-${Date.now()}@127.0.0.2`;
      const branch = `z9hG4bKabsorb${Date.now()}`;
      const sdp = ['v=0', 'o=- 1 1 IN IP4 127.0.0.2', 's=-', 'c=IN IP4 127.0.0.2', 't=0 0'];
      const body = `${[...sdp, 'm=audio 40000 RTP/AVP 0', 'a=rtpmap:0 PCMU/8000'].join('\r\n')}\r\n`;
      const via = (b: string) => `Via: SIP/2.0/UDP 127.0.0.2:${peer.port};branch=${b}`;
      const head = ['Max-Forwards: 70', 'From: <sip:absorb@127.0.0.2>;tag=a1'];
      const invite = [
        `INVITE sip:${n.number}@${host}:${port} SIP/2.0`,
        via(branch),
        ...head,
        `To: <sip:${n.number}@${host}>`,
        `Call-ID: ${callId}`,
        'CSeq: 1 INVITE',
        `Contact: <sip:absorb@127.0.0.2:${peer.port}>`,
        'Content-Type: application/sdp',
        `Content-Length: ${body.length}`,
        '',
        body,
      ].join('\r\n');
      peer.send(invite, Number(port), host);
      const ok = await peer.final(branch, 10_000);
      expect(ok && statusOf(ok)).toBe(200);
      const to = /^To:.*$/im.exec(ok as string)?.[0] as string;
      peer.send(
        // The ACK of a 2xx is a transaction of its own (RFC 3261 §13.2.2.4): a new branch.
        [
          `ACK sip:${n.number}@${host}:${port} SIP/2.0`,
          via(`${branch}ack`),
          ...head,
          to,
          `Call-ID: ${callId}`,
          'CSeq: 1 ACK',
        ]
          .concat(['Content-Length: 0', '', ''])
          .join('\r\n'),
        Number(port),
        host,
      );
      // Past the first 2xx retransmission (T1): an unacknowledged 200 would come again by then.
      await new Promise((res) => setTimeout(res, 700));
      const answered = peer.answers(branch).length;
      peer.send(invite, Number(port), host);
      await new Promise((res) => setTimeout(res, 700));
      expect(peer.answers(branch)).toHaveLength(answered);
      const r = await ts.request(
        'GET',
        `${API}/Accounts/${owner.sid}/Calls.json?To=${encodeURIComponent(n.number)}`,
        {
          auth: owner.creds,
        },
      );
      expect(r.json.calls).toHaveLength(1);
      expect(r.json.calls[0]).toMatchObject({ status: 'in-progress' });
    } finally {
      peer.close();
    }
  });
});
