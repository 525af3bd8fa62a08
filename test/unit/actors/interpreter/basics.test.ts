import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verifyTwilioSignature } from '../../../../src/webhooks/index.js';
import { ACCOUNT, CALL, createHarness, type Harness, paramsOf, TOKEN, xml } from './harness.js';

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  await h.close();
});

describe('request parameters', () => {
  it('POSTs the call parameters, signed, to Url', async () => {
    h.server.script('/voice', { body: xml('<Hangup/>') });
    const out = await h.run({
      call: {
        callSid: CALL,
        accountSid: ACCOUNT,
        from: '+15550001111',
        to: '+15550002222',
        direction: 'inbound',
        endpointId: CALL,
        forwardedFrom: '+15550003333',
        callerName: 'Alice',
        extraParams: [['SipHeader_X-Custom', 'v1']],
      },
    });
    expect(out).toEqual({ end: 'hangup' });
    const [req] = h.server.requestsTo('/voice');
    expect(req?.method).toBe('POST');
    const p = paramsOf(req!);
    expect([...p.entries()]).toEqual([
      ['CallSid', CALL],
      ['AccountSid', ACCOUNT],
      ['From', '+15550001111'],
      ['To', '+15550002222'],
      ['CallStatus', 'ringing'],
      ['ApiVersion', '2012-04-24'],
      ['Direction', 'inbound'],
      ['ForwardedFrom', '+15550003333'],
      ['CallerName', 'Alice'],
      ['SipHeader_X-Custom', 'v1'],
    ]);
    const sig = req!.headers['x-twilio-signature'] as string;
    expect(verifyTwilioSignature(h.url('/voice'), Object.fromEntries(p), TOKEN, sig)).toBe(true);
    // Hangup is not a media verb: the call is never answered, the leg is ended.
    expect(h.intents).toEqual([{ type: 'hangup' }]);
  });

  it('GET puts the parameters in the query; an answered call reports in-progress', async () => {
    h.server.script('/voice', { body: xml('') });
    await h.run({ method: 'GET', answered: true });
    const [req] = h.server.requestsTo('/voice');
    expect(req?.method).toBe('GET');
    expect(paramsOf(req!).get('CallStatus')).toBe('in-progress');
    expect(paramsOf(req!).get('CallSid')).toBe(CALL);
  });

  it('an empty document hangs up (end of document)', async () => {
    h.server.script('/voice', { body: xml('') });
    expect(await h.run()).toEqual({ end: 'hangup' });
    expect(h.intents).toEqual([{ type: 'hangup' }]);
    expect(h.media.commands).toEqual([]);
  });

  it('a whisper document ends without hanging up; <Hangup> in it still hangs up', async () => {
    h.server.script('/voice', { body: xml('<Pause length="0"/>') });
    expect(await h.run({ answered: true, whisper: true })).toEqual({ end: 'document-ended' });
    expect(h.intents).toEqual([]);
    h.server.script('/voice', { body: xml('<Hangup/>') });
    expect(await h.run({ answered: true, whisper: true })).toEqual({ end: 'hangup' });
    expect(h.intents).toEqual([{ type: 'hangup' }]);
  });
});

describe('Say', () => {
  it('answers before the first media verb, speaks with voice/language/loop, then hangs up', async () => {
    h.server.script('/voice', {
      body: xml('<Say voice="woman" language="fr-FR" loop="2">Bonjour</Say><Say>Again</Say>'),
    });
    const out = await h.run();
    expect(out).toEqual({ end: 'hangup' });
    expect(h.intents).toEqual([{ type: 'answer' }, { type: 'hangup' }]);
    const plays = h.media.ops('play');
    expect(plays.map((p) => [p.source, p.opts])).toEqual([
      [{ kind: 'tts', text: 'Bonjour', voice: 'woman', language: 'fr-FR' }, { loop: 2 }],
      [{ kind: 'tts', text: 'Again', voice: 'man', language: 'en-US' }, { loop: 1 }],
    ]);
    expect(plays.every((p) => p.endpointId === CALL)).toBe(true);
  });
});
