/**
 * SIP REFER blind transfer (RFC 5589 §6.1) on a call bridged by `<Dial>`, with three sipp peers: a
 * caller dials a number whose markup dials bob; bob (transferor) REFERs the caller to carol. The
 * number's ReferUrl runs on the caller's leg with ReferTarget/Transferor/Transferee and dials carol;
 * bob gets 202, NOTIFY 100 Trying, NOTIFY 200 OK, then BYE. Refusals: a REFER outside a dialog and
 * a number without ReferUrl get 404 with `Event: refer` and a Reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, type Credentials, type TestServer } from '../../support/server.js';
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
  fx = await startVoiceFixture('refer', 'refer@example.test');
  ({ ts, hooks, owner, target } = fx);
});
afterAll(async () => {
  await fx?.dispose();
});

const numberFor = (form: Record<string, string>) => fx.buyNumber('070', form);

const formsTo = (path: string) =>
  hooks.requestsTo(path).map((r) => Object.fromEntries(new URLSearchParams(r.rawBody.toString())));

const getCall = async (sid: string) =>
  (await ts.request('GET', `${API}/Accounts/${owner.sid}/Calls/${sid}.json`, { auth: owner.creds })).json;

describe('SIP REFER on a call bridged by <Dial>', () => {
  it('202, NOTIFY 100 and 200 to the transferor; the ReferUrl bridges the caller to the target; the transferor is released', async () => {
    const carol = await startSipp({ scenario: 'uas-answer-x-header-then-bye.xml', localIp: '127.0.0.3' });
    const bob = await startSipp({
      scenario: 'uas-answer-refer-expect-notify-then-bye.xml',
      localIp: '127.0.0.3',
      keys: { target: `carol@127.0.0.3:${carol.localPort}` },
    });
    hooks.script('/refer-voice', xml(`<Dial><Sip>sip:bob@127.0.0.3:${bob.localPort}</Sip></Dial>`));
    hooks.script('/refer-to', xml(`<Dial><Sip>sip:carol@127.0.0.3:${carol.localPort}</Sip></Dial>`));
    const n = await numberFor({
      VoiceUrl: `${hooks.origin}/refer-voice`,
      ReferUrl: `${hooks.origin}/refer-to`,
      StatusCallback: `${hooks.origin}/status`,
    });
    const caller = await runSipp({ scenario: 'uac-call-expect-bye.xml', remote: target, service: n.number });
    const [b, c] = await Promise.all([bob.done, carol.done]);
    expect(b.errors, b.errors).toBe('');
    expect(b.code).toBe(0);
    expect(c.errors, c.errors).toBe('');
    expect(c.code).toBe(0);
    expect(caller.errors, caller.errors).toBe('');
    expect(caller.code).toBe(0);

    const [voice] = formsTo('/refer-voice');
    const parentSid = voice!.CallSid!;
    const [referred] = formsTo('/refer-to');
    expect(referred).toMatchObject({
      CallSid: parentSid,
      ReferTarget: 'carol',
      Transferor: 'bob',
      Transferee: 'sipp',
      CallStatus: 'in-progress',
      To: n.number,
    });
    // Two children of the caller's leg: bob (released after the transfer), then carol.
    const children = await until(
      async () =>
        (
          await ts.request('GET', `${API}/Accounts/${owner.sid}/Calls.json?ParentCallSid=${parentSid}`, {
            auth: owner.creds,
          })
        ).json.calls as Array<{ sid: string; to: string; status: string }>,
      (l) => l.length === 2 && l.every((x) => x.status === 'completed'),
    );
    expect(children.map((x) => x.to.replace(/:\d+$/, '')).sort()).toEqual([
      'sip:bob@127.0.0.3',
      'sip:carol@127.0.0.3',
    ]);
    expect(
      await until(
        () => getCall(parentSid),
        (x) => x.status === 'completed',
      ),
    ).toMatchObject({
      status: 'completed',
    });
    // The number's StatusCallback names the transfer once it happened.
    const completed = await until(
      () => formsTo('/status').filter((f) => f.CallSid === parentSid && f.CallStatus === 'completed'),
      (l) => l.length > 0,
    );
    expect(completed[0]).toMatchObject({ ReferTarget: 'carol', Transferor: 'bob', Transferee: 'sipp' });
    // …and the leg its last Dial reached (carol's): OutboundCallSid and the DialSip* of its 200.
    const carolLeg = children.find((x) => x.to.startsWith('sip:carol@'));
    expect(completed[0]).toMatchObject({
      OutboundCallSid: carolLeg?.sid,
      DialSipResponseCode: '200',
      'DialSipHeader_X-Agent': 'carol-7',
    });
    expect(completed[0]!.DialSipCallId).toMatch(/@/);
    const ringing = formsTo('/status').find((f) => f.CallSid === parentSid && f.CallStatus === 'ringing');
    expect(ringing?.ReferTarget).toBeUndefined();
  });

  it('a number without ReferUrl: 404 with Event refer and a Reason; the call goes on until bob hangs up', async () => {
    const bob = await startSipp({
      scenario: 'uas-answer-refer-expect-404-then-bye.xml',
      localIp: '127.0.0.3',
      keys: { target: 'carol@127.0.0.3' },
    });
    hooks.script('/no-refer-voice', xml(`<Dial><Sip>sip:bob@127.0.0.3:${bob.localPort}</Sip></Dial>`));
    const n = await numberFor({ VoiceUrl: `${hooks.origin}/no-refer-voice` });
    const caller = await runSipp({ scenario: 'uac-call-expect-bye.xml', remote: target, service: n.number });
    const b = await bob.done;
    expect(b.errors, b.errors).toBe('');
    expect(b.code).toBe(0);
    expect(caller.errors, caller.errors).toBe('');
    expect(caller.code).toBe(0);
  });

  it('a REFER outside any dialog: 404 with Event refer and a Reason', async () => {
    const r = await runSipp({
      scenario: 'uac-refer-expect-404.xml',
      remote: target,
      service: '+15550700999',
    });
    expect(r.errors, r.errors).toBe('');
    expect(r.code).toBe(0);
  });
});

describe('<Refer> (outbound transfer of the caller)', () => {
  it('sends REFER with the <Sip> target and posts ReferCallStatus, ReferSipResponseCode, NotifySipResponseCode', async () => {
    hooks.script('/refer-verb', xml('<Refer action="/refer-done"><Sip>sip:carol@example.test</Sip></Refer>'));
    hooks.script('/refer-done', xml('<Hangup/>'));
    const n = await numberFor({ VoiceUrl: `${hooks.origin}/refer-verb` });
    const caller = await runSipp({
      scenario: 'uac-call-expect-refer-notify-then-bye.xml',
      remote: target,
      service: n.number,
    });
    expect(caller.errors, caller.errors).toBe('');
    expect(caller.code).toBe(0);
    const [done] = formsTo('/refer-done');
    expect(done).toMatchObject({
      ReferCallStatus: 'in-progress',
      ReferSipResponseCode: '202',
      NotifySipResponseCode: '200',
      CallStatus: 'in-progress',
      To: n.number,
    });
  });
});
