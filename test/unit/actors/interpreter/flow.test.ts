import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createActor, waitFor } from 'xstate';
import { createInterpreterMachine } from '../../../../src/actors/interpreter/interpreter.machine.js';
import { MAX_REDIRECT_CHAIN } from '../../../../src/actors/interpreter/interpreter.types.js';
import { closedPort } from '../../../support/webhook-server.js';
import { ACCOUNT, CALL, createHarness, type Harness, inState, paramsOf, xml } from './harness.js';

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  await h.close();
});

const spoken = () =>
  h.media.ops('play').map((p) => (p.source.kind === 'tts' ? p.source.text : p.source.kind));

describe('Redirect', () => {
  it('replaces the program with the target document (relative URL, method)', async () => {
    h.server.script('/app/voice', { body: xml('<Redirect method="GET">next</Redirect><Say>never</Say>') });
    h.server.script('/app/next', { body: xml('<Say>second</Say>') });
    await h.run({ url: h.url('/app/voice') });
    const [next] = h.server.requestsTo('/app/next');
    expect(next?.method).toBe('GET');
    expect(paramsOf(next!).get('CallSid')).toBe(CALL);
    expect(spoken()).toEqual(['second']);
  });

  it(`a chain of more than ${MAX_REDIRECT_CHAIN} redirects without a media verb: Notification 11215 + hangup`, async () => {
    h.server.script('/voice', { body: xml('<Redirect>/voice</Redirect>') });
    expect(await h.run()).toEqual({ end: 'hangup' });
    // The first document plus MAX_REDIRECT_CHAIN followed redirects; the next one is refused.
    expect(h.server.requestsTo('/voice')).toHaveLength(MAX_REDIRECT_CHAIN + 1);
    expect(h.notifications).toMatchObject([{ errorCode: 11215, log: 0, requestUrl: h.url('/voice') }]);
    expect(h.intents).toEqual([{ type: 'hangup' }]);
  });

  it('a media verb resets the chain, so a Say/Redirect loop is not capped', async () => {
    const loop = { body: xml('<Say>tick</Say><Redirect>/voice</Redirect>') };
    const loops = Array.from({ length: MAX_REDIRECT_CHAIN + 5 }, () => loop);
    h.server.script('/voice', ...loops, { body: xml('<Hangup/>') });
    expect(await h.run()).toEqual({ end: 'hangup' });
    expect(spoken()).toHaveLength(MAX_REDIRECT_CHAIN + 5);
    expect(h.notifications).toEqual([]);
  });
});

describe('fetch failures and the fallback URL', () => {
  it('a fetch that throws: Notification 12400 and hangup, without answering', async () => {
    await h.close();
    h = await createHarness({
      fetch: async () => {
        throw new Error('fetcher broke');
      },
    });
    expect(await h.run()).toEqual({ end: 'hangup' });
    expect(h.notifications).toMatchObject([{ errorCode: 12400, callSid: CALL }]);
    expect(h.notifications[0]?.messageText).toContain('fetcher broke');
    expect(h.intents).toEqual([{ type: 'hangup' }]);
  });

  it('primary down → FallbackUrl (FallbackMethod) is used; the failure is a Notification', async () => {
    const dead = `http://127.0.0.1:${await closedPort()}/voice`;
    h.server.script('/fallback', { body: xml('<Say>from fallback</Say>') });
    await h.run({ url: dead, fallbackUrl: h.url('/fallback'), fallbackMethod: 'GET' });
    expect(h.server.requestsTo('/fallback')[0]?.method).toBe('GET');
    expect(spoken()).toEqual(['from fallback']);
    expect(h.notifications).toMatchObject([{ errorCode: 11205, callSid: CALL, requestUrl: dead }]);
  });

  it('primary returns invalid XML → Notification 12100 and FallbackUrl', async () => {
    h.server.script('/voice', { body: '<Response><Say>unclosed</Response>' });
    h.server.script('/fallback', { body: xml('<Say>ok</Say>') });
    await h.run({ fallbackUrl: h.url('/fallback') });
    expect(spoken()).toEqual(['ok']);
    expect(h.notifications).toMatchObject([
      {
        errorCode: 12100,
        log: 1,
        requestUrl: h.url('/voice'),
        responseBody: '<Response><Say>unclosed</Response>',
      },
    ]);
    expect(paramsOf(h.server.requestsTo('/fallback')[0]!).get('CallSid')).toBe(CALL);
  });

  it('primary returns 500 → the WebhookClient falls back; Notification 11200', async () => {
    h.server.script('/voice', { status: 500, body: 'oops' });
    h.server.script('/fallback', { body: xml('<Say>ok</Say>') });
    await h.run({ fallbackUrl: h.url('/fallback') });
    expect(spoken()).toEqual(['ok']);
    expect(h.notifications).toMatchObject([{ errorCode: 11200, log: 1 }]);
  });

  it('wrong Content-Type → Notification 12300, then the fallback', async () => {
    h.server.script('/voice', { headers: { 'Content-Type': 'application/json' }, body: '{"say":"hi"}' });
    h.server.script('/fallback', { body: xml('<Say>ok</Say>') });
    await h.run({ fallbackUrl: h.url('/fallback') });
    expect(h.notifications).toMatchObject([{ errorCode: 12300 }]);
    expect(spoken()).toEqual(['ok']);
  });

  it('primary and fallback both fail → Notifications, hangup without answering', async () => {
    h.server.script('/voice', { body: 'not xml' });
    h.server.script('/fallback', { status: 404 });
    expect(await h.run({ fallbackUrl: h.url('/fallback') })).toEqual({ end: 'hangup' });
    expect(h.notifications.map((n) => [n.errorCode, n.log])).toEqual([
      [12100, 1],
      [11200, 0],
    ]);
    expect(h.intents).toEqual([{ type: 'hangup' }]);
  });

  it('invalid XML and no fallback → Notification 12100 (error) and hangup', async () => {
    h.server.script('/voice', { body: '<!DOCTYPE x [<!ENTITY a "b">]><Response/>' });
    expect(await h.run()).toEqual({ end: 'hangup' });
    expect(h.notifications).toMatchObject([{ errorCode: 12100, log: 0 }]);
  });

  it('an action document that fails to load ends the call', async () => {
    h.media.collectResults.push({ digits: '9', reason: 'timeout' });
    h.server.script('/voice', { body: xml('<Gather action="/gone"/>') });
    expect(await h.run({ fallbackUrl: h.url('/fallback-not-used-for-actions') })).toEqual({ end: 'hangup' });
    expect(h.server.requestsTo('/fallback-not-used-for-actions')).toHaveLength(0);
    expect(h.notifications).toMatchObject([{ errorCode: 11200, requestUrl: h.url('/gone') }]);
  });
});

describe('unknown verbs and bad attributes', () => {
  it('unknown verb → Notification 12200, skipped; the rest runs', async () => {
    h.server.script('/voice', {
      body: xml('<Dance/><Say loop="many">hello</Say>'),
    });
    await h.run();
    expect(h.notifications).toMatchObject([
      {
        errorCode: 12200,
        log: 1,
        messageText: expect.stringContaining('<Dance>'),
        requestUrl: h.url('/voice'),
      },
      { errorCode: 12200, log: 1, messageText: expect.stringContaining('loop') },
    ]);
    expect(h.media.ops('play').map((p) => p.opts.loop)).toEqual([1]);
  });

  it('many diagnostics are capped with one summary', async () => {
    h.server.script('/voice', { body: xml('<X/>'.repeat(25)) });
    await h.run();
    expect(h.notifications).toHaveLength(11);
    expect(h.notifications.at(-1)?.messageText).toContain('15 more');
  });
});

describe('REST redirect and hangup while a verb runs', () => {
  it('http.redirect mid-Say stops the verb (media stop) and runs the new document', async () => {
    h.media.playScript = (s) => (s.kind === 'tts' && s.text === 'long' ? 'hold' : 'complete');
    h.server.script('/voice', { body: xml('<Say loop="0">long</Say><Say>never</Say>') });
    h.server.script('/new', { body: xml('<Say>redirected</Say>') });
    const actor = h.start();
    await inState(actor, 'executing.running.say');
    await vi.waitFor(() => expect(h.media.running()).toHaveLength(1));
    actor.send({ type: 'http.redirect', url: h.url('/new'), method: 'GET' });
    expect(h.media.ops('stop')).toEqual([{ op: 'stop', endpointId: CALL }]);
    await inState(actor, 'hungUp');
    expect(spoken()).toEqual(['long', 'redirected']);
    expect(h.server.requestsTo('/new')[0]?.method).toBe('GET');
    expect(paramsOf(h.server.requestsTo('/new')[0]!).get('CallStatus')).toBe('in-progress');
    // Answered once only.
    expect(h.intents).toEqual([{ type: 'answer' }, { type: 'hangup' }]);
  });

  it('http.redirect mid-Gather stops the collect; fallback of the redirect is used when its Url fails', async () => {
    h.server.script('/voice', { body: xml('<Gather><Say>x</Say></Gather>') });
    h.server.script('/new', { status: 503 });
    h.server.script('/new-fallback', { body: xml('') });
    const actor = h.start();
    await vi.waitFor(() => expect(h.media.ops('collect')).toHaveLength(1));
    actor.send({ type: 'http.redirect', url: h.url('/new'), fallbackUrl: h.url('/new-fallback') });
    expect(h.media.ops('stop')).toHaveLength(1);
    await inState(actor, 'hungUp');
    expect(h.server.requestsTo('/new-fallback')).toHaveLength(1);
    expect(h.media.running()).toEqual([]);
  });

  it('http.redirect while the markup is being fetched replaces the request', async () => {
    h.server.script('/voice', { delayMs: 300, body: xml('<Say>old</Say>') });
    h.server.script('/new', { body: xml('<Say>new</Say>') });
    const actor = h.start();
    await inState(actor, 'fetching');
    actor.send({ type: 'http.redirect', url: h.url('/new') });
    await inState(actor, 'hungUp');
    expect(spoken()).toEqual(['new']);
  });

  it('the replaced fetch answering first is ignored: only the new document runs', async () => {
    h.server.script('/voice', { delayMs: 50, body: xml('<Say>old</Say>') });
    h.server.script('/new', { delayMs: 300, body: xml('<Say>new</Say>') });
    const actor = h.start();
    await inState(actor, 'fetching');
    actor.send({ type: 'http.redirect', url: h.url('/new') });
    await vi.waitFor(() => expect(h.server.requestsTo('/voice')).toHaveLength(1));
    await inState(actor, 'hungUp');
    expect(spoken()).toEqual(['new']);
  });

  it('call.ended while a verb runs stops it; no hangup intent; output call-ended', async () => {
    h.media.playScript = () => 'hold';
    h.server.script('/voice', { body: xml('<Play>/music.wav</Play>') });
    const actor = h.start();
    await vi.waitFor(() => expect(h.media.running()).toHaveLength(1));
    actor.send({ type: 'call.ended' });
    expect(actor.getSnapshot().status).toBe('done');
    expect(actor.getSnapshot().output).toEqual({ end: 'call-ended' });
    expect(h.media.ops('stop')).toEqual([{ op: 'stop', endpointId: CALL }]);
    expect(h.intents).toEqual([{ type: 'answer' }]);
  });

  it('BYE while a Gather collects: the collect is stopped and nothing is posted', async () => {
    h.server.script('/voice', { body: xml('<Gather action="/g"><Say>menu</Say></Gather>') });
    const actor = h.start();
    await vi.waitFor(() => expect(h.media.ops('collect')).toHaveLength(1));
    actor.send({ type: 'call.ended' });
    expect(h.media.ops('stop')).toHaveLength(1);
    await vi.waitFor(() => expect(h.media.running()).toEqual([]));
    expect(h.server.requestsTo('/g')).toHaveLength(0);
    expect(actor.getSnapshot().output).toEqual({ end: 'call-ended' });
  });

  it('a REST redirect during a Dial aborts it and runs the new document', async () => {
    h.server.script('/voice', { body: xml('<Dial action="/dialed">+15557654321</Dial>') });
    h.server.script('/new', { body: xml('<Say>moved</Say>') });
    const actor = h.start();
    await inState(actor, 'executing.running.dial');
    actor.send({ type: 'http.redirect', url: h.url('/new') });
    expect(h.dialer.aborted).toHaveLength(1);
    await inState(actor, 'hungUp');
    expect(spoken()).toEqual(['moved']);
    expect(h.server.requestsTo('/dialed')).toHaveLength(0);
  });

  it('call.ended during a Record with nothing said stops it; no Recording, no request', async () => {
    h.server.script('/voice', { body: xml('<Record action="/vm"/>') });
    const actor = h.start();
    await vi.waitFor(() => expect(h.media.ops('record')).toHaveLength(1));
    actor.send({ type: 'call.ended' });
    expect(h.media.ops('stop')).toHaveLength(1);
    await waitFor(actor, (s) => s.status === 'done');
    expect(actor.getSnapshot().output).toEqual({ end: 'call-ended' });
    expect(h.recordings).toEqual([]);
    expect(h.server.requestsTo('/vm')).toHaveLength(0);
  });

  it('voicemail: hanging up during Record stores it and requests action with Digits=hangup', async () => {
    h.media.recordedSecondsOnStop = 12.6;
    h.server.script('/voice', { body: xml('<Say>leave a message</Say><Record action="/vm"/>') });
    h.server.script('/vm', { body: xml('<Say>ignored</Say>') });
    const actor = h.start();
    await vi.waitFor(() => expect(h.media.ops('record')).toHaveLength(1));
    actor.send({ type: 'call.ended' });
    actor.send({ type: 'call.ended' });
    actor.send({ type: 'http.redirect', url: h.url('/ignored') });
    await waitFor(actor, (s) => s.status === 'done');
    expect(actor.getSnapshot().output).toEqual({ end: 'call-ended' });
    const sid = h.media.ops('record')[0]!.opts.recordingSid;
    expect(h.recordings).toEqual([
      { recordingSid: sid, accountSid: ACCOUNT, callSid: CALL, durationSeconds: 12.6 },
    ]);
    const p = paramsOf(h.server.requestsTo('/vm')[0]!);
    expect([p.get('RecordingSid'), p.get('RecordingDuration'), p.get('Digits'), p.get('CallStatus')]).toEqual(
      [sid, '13', 'hangup', 'completed'],
    );
    expect(h.server.requestsTo('/ignored')).toHaveLength(0);
    expect(h.media.ops('play')).toHaveLength(1);
    expect(h.intents).toEqual([{ type: 'answer' }]);
  });

  it('call.ended while fetching (caller gave up): the late document is ignored', async () => {
    await h.close();
    let deliver: (r: Awaited<ReturnType<Harness['services']['fetch']>>) => void = () => {};
    h = await createHarness({
      fetch: () =>
        new Promise((resolve) => {
          deliver = resolve;
        }),
    });
    const actor = h.start();
    await inState(actor, 'fetching');
    actor.send({ type: 'call.ended' });
    expect(actor.getSnapshot().output).toEqual({ end: 'call-ended' });
    deliver({
      ok: true,
      status: 200,
      headers: {},
      body: xml('<Say>late</Say>'),
      contentType: 'text/xml',
      url: h.url('/voice'),
      method: 'POST',
      attempts: 1,
      usedFallback: false,
      idempotencyToken: 't',
    });
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect(h.intents).toEqual([]);
    expect(h.media.commands).toEqual([]);
  });

  it('the media endpoint lost mid-verb ends the call', async () => {
    h.media.playScript = () => 'hold';
    h.server.script('/voice', { body: xml('<Say>x</Say><Say>y</Say>') });
    const actor = h.start();
    await vi.waitFor(() => expect(h.media.running()).toHaveLength(1));
    h.media.loseEndpoint(CALL);
    await inState(actor, 'hungUp');
    expect(h.media.ops('play')).toHaveLength(1);
  });
});

describe('answering', () => {
  it('the call cannot be answered (caller gone) → ends without running the verb', async () => {
    await h.close();
    h = await createHarness({
      call: {
        answer: (_sid, replyTo) => replyTo.send({ type: 'call.answerFailed' }),
        reject: () => {},
        hangup: () => {},
        sendDigits: async () => {},
        refer: async () => ({ referStatus: 481, notifyStatus: null, ended: true }),
      },
    });
    h.server.script('/voice', { body: xml('<Say>x</Say>') });
    expect(await h.run()).toEqual({ end: 'call-ended' });
    expect(h.media.commands).toEqual([]);
  });

  it('waits in `answering` for the leg; call.answered starts the verb', async () => {
    const asked = h.holdAnswers();
    h.media.playScript = () => 'hold';
    h.server.script('/voice', { body: xml('<Say>x</Say>') });
    const actor = h.start();
    await inState(actor, 'executing.answering');
    expect(asked).toHaveLength(1);
    expect(h.media.commands).toEqual([]);
    asked[0]!.send({ type: 'call.answered' });
    await inState(actor, 'executing.running.say');
    expect(actor.getSnapshot().context.answered).toBe(true);
    expect(spoken()).toEqual(['x']);
  });

  it('call.answerFailed ends the interpretation without running the verb or hanging up', async () => {
    const asked = h.holdAnswers();
    h.server.script('/voice', { body: xml('<Say>x</Say>') });
    const actor = h.start();
    await inState(actor, 'executing.answering');
    asked[0]!.send({ type: 'call.answerFailed' });
    await waitFor(actor, (s) => s.status === 'done');
    expect(actor.getSnapshot().output).toEqual({ end: 'call-ended' });
    expect(h.media.commands).toEqual([]);
    expect(h.intents).toEqual([{ type: 'answer' }]);
  });

  it('the call ends while answering: ended at once, nothing played', async () => {
    const asked = h.holdAnswers();
    h.server.script('/voice', { body: xml('<Say>x</Say>') });
    const actor = h.start();
    await inState(actor, 'executing.answering');
    actor.send({ type: 'call.ended' });
    expect(actor.getSnapshot().output).toEqual({ end: 'call-ended' });
    expect(asked).toHaveLength(1);
    expect(h.media.commands).toEqual([]);
  });

  it('a REST redirect while answering fetches the new document and answers again for its media verb', async () => {
    const asked = h.holdAnswers();
    h.media.playScript = () => 'hold';
    h.server.script('/voice', { body: xml('<Say>old</Say>') });
    h.server.script('/new', { body: xml('<Sms>x</Sms><Say>new</Say>') });
    const actor = h.start();
    await inState(actor, 'executing.answering');
    actor.send({ type: 'http.redirect', url: h.url('/new') });
    expect(actor.getSnapshot().matches('fetching')).toBe(true);
    // The first answer's outcome, late: the fetch goes on.
    asked[0]!.send({ type: 'call.answered' });
    expect(actor.getSnapshot().matches('fetching')).toBe(true);
    await inState(actor, 'executing.answering');
    expect(asked).toHaveLength(2);
    asked[1]!.send({ type: 'call.answered' });
    await inState(actor, 'executing.running.say');
    expect(spoken()).toEqual(['new']);
  });

  it('non-media verbs before the first media verb do not answer; the media verb does, once', async () => {
    h.server.script('/voice', { body: xml('<Sms>x</Sms><Say>a</Say><Say>b</Say>') });
    await h.run();
    expect(h.intents).toEqual([{ type: 'answer' }, { type: 'hangup' }]);
    expect(paramsOf(h.server.requestsTo('/voice')[0]!).get('CallStatus')).toBe('ringing');
  });

  it('the context stays plain JSON while running', async () => {
    h.media.playScript = () => 'hold';
    h.server.script('/voice', { body: xml('<Say>x</Say>') });
    const actor = h.start();
    await vi.waitFor(() => expect(h.media.running()).toHaveLength(1));
    const ctx = actor.getSnapshot().context;
    expect(JSON.parse(JSON.stringify(ctx))).toEqual(ctx);
    expect(ctx).toMatchObject({ index: 0, answered: true, documentUrl: h.url('/voice') });
  });
});

describe('persistence', () => {
  it('the persisted snapshot is JSON; a restored interpreter re-runs the current verb and goes on', async () => {
    h.media.playScript = () => 'hold';
    h.server.script('/voice', { body: xml('<Say>first</Say><Say>second</Say>') });
    const actor = h.start();
    await vi.waitFor(() => expect(h.media.running()).toHaveLength(1));
    const json = JSON.stringify(actor.getPersistedSnapshot());
    actor.stop();
    expect(h.media.ops('stop')).toHaveLength(1);

    h.media.playScript = () => 'complete';
    const restored = createActor(createInterpreterMachine(h.services), {
      snapshot: JSON.parse(json),
      input: undefined as never,
    });
    restored.start();
    await waitFor(restored, (s) => s.status === 'done');
    expect(restored.getSnapshot().output).toEqual({ end: 'hangup' });
    expect(spoken()).toEqual(['first', 'first', 'second']);
    // Not fetched again, not answered again.
    expect(h.server.requestsTo('/voice')).toHaveLength(1);
    expect(h.intents).toEqual([{ type: 'answer' }, { type: 'hangup' }]);
  });

  it('a restored interpreter in a Pause waits it again and goes on', async () => {
    h.server.script('/voice', { body: xml('<Pause length="1"/><Hangup/>') });
    const actor = h.start();
    await waitFor(actor, (s) => s.matches({ executing: { running: 'pause' } }));
    const json = JSON.stringify(actor.getPersistedSnapshot());
    actor.stop();
    const restored = createActor(createInterpreterMachine(h.services), {
      snapshot: JSON.parse(json),
      input: undefined as never,
    });
    restored.start();
    await waitFor(restored, (s) => s.status === 'done', { timeout: 5_000 });
    expect(restored.getSnapshot().output).toEqual({ end: 'hangup' });
    expect(h.intents).toEqual([{ type: 'answer' }, { type: 'hangup' }]);
  });
});
