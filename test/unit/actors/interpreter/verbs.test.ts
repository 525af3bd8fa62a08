import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ACCOUNT, CALL, createHarness, type Harness, inState, paramsOf, xml } from './harness.js';

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  vi.useRealTimers();
  await h.close();
});

describe('Play', () => {
  it('resolves a relative URL against the document and plays it with loop', async () => {
    h.server.script('/app/voice', { body: xml('<Play loop="3">../audio/hello.wav</Play>') });
    await h.run({ url: h.url('/app/voice') });
    expect(h.media.ops('play').map((p) => [p.source, p.opts])).toEqual([
      [{ kind: 'url', url: h.url('/audio/hello.wav') }, { loop: 3 }],
    ]);
    expect(h.intents[0]).toEqual({ type: 'answer' });
  });

  it('digits are sent to the far end through the call', async () => {
    h.server.script('/voice', { body: xml('<Play digits="ww1234#"/>') });
    await h.run();
    expect(h.intents).toEqual([
      { type: 'answer' },
      { type: 'sendDigits', digits: 'ww1234#' },
      { type: 'hangup' },
    ]);
    expect(h.media.ops('play')).toEqual([]);
  });

  it('a fetch failure writes a Notification (11200) and the program continues', async () => {
    h.media.playScript = (s) => (s.kind === 'url' ? { fail: 'fetch-failed' } : 'complete');
    h.server.script('/voice', { body: xml('<Play>http://media.invalid/x.wav</Play><Say>after</Say>') });
    await h.run();
    expect(h.notifications).toMatchObject([
      { errorCode: 11200, callSid: CALL, accountSid: ACCOUNT, requestUrl: 'http://media.invalid/x.wav' },
    ]);
    expect(h.media.ops('play').map((p) => p.source.kind)).toEqual(['url', 'tts']);
  });
});

describe('Pause', () => {
  it('answers, waits `length` seconds (fake clock), then continues', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    h.server.script('/voice', { body: xml('<Pause length="2"/><Hangup/>') });
    const actor = h.start();
    await inState(actor, 'executing.running.pause');
    expect(h.intents).toEqual([{ type: 'answer' }]);
    await vi.advanceTimersByTimeAsync(1_999);
    expect(actor.getSnapshot().matches('executing.running.pause' as never)).toBe(true);
    await vi.advanceTimersByTimeAsync(1);
    await inState(actor, 'hungUp');
    expect(h.intents).toEqual([{ type: 'answer' }, { type: 'hangup' }]);
  });

  it('length 0 goes straight on to the next verb', async () => {
    h.server.script('/voice', { body: xml('<Pause length="0"/><Say>after</Say>') });
    expect(await h.run()).toEqual({ end: 'hangup' });
    expect(h.media.ops('play').map((p) => p.source.kind)).toEqual(['tts']);
  });

  it('the call ending mid-Pause clears its timer: nothing runs after it', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    h.server.script('/voice', { body: xml('<Pause length="5"/><Say>never</Say>') });
    const actor = h.start();
    await inState(actor, 'executing.running.pause');
    const timers = vi.getTimerCount();
    actor.send({ type: 'call.ended' });
    expect(actor.getSnapshot().output).toEqual({ end: 'call-ended' });
    expect(vi.getTimerCount()).toBe(timers - 1);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(h.media.ops('play')).toEqual([]);
    expect(h.intents).toEqual([{ type: 'answer' }]);
  });

  it('an injected `sleep` is used, and its signal aborts when the Pause is stopped', async () => {
    await h.close();
    const sleeps: Array<{ ms: number; signal: AbortSignal }> = [];
    h = await createHarness({
      sleep: (ms, signal) => {
        sleeps.push({ ms, signal });
        return new Promise(() => {});
      },
    });
    h.server.script('/voice', { body: xml('<Pause length="2"/>') });
    h.server.script('/new', { body: xml('<Hangup/>') });
    const actor = h.start();
    await inState(actor, 'executing.running.pause');
    expect(sleeps.map((s) => [s.ms, s.signal.aborted])).toEqual([[2000, false]]);
    actor.send({ type: 'http.redirect', url: h.url('/new') });
    expect(sleeps[0]!.signal.aborted).toBe(true);
    await inState(actor, 'hungUp');
  });
});

describe('Gather', () => {
  it('plays nested prompts interruptibly, collects, and posts Digits to action', async () => {
    h.media.collectResults.push({ digits: '1234', reason: 'finish-key' });
    h.server.script('/voice', {
      body: xml(
        '<Gather action="/pin" method="POST" timeout="7" finishOnKey="*" numDigits="4">' +
          '<Say>Enter PIN</Say><Play>/beep.wav</Play><Pause length="1"/></Gather><Say>unreached</Say>',
      ),
    });
    h.server.script('/pin', { body: xml('<Say>Thanks</Say>') });
    await h.run();
    const plays = h.media.ops('play');
    expect(plays.map((p) => [p.source, p.opts.interruptOnDtmf])).toEqual([
      [{ kind: 'tts', text: 'Enter PIN', voice: 'man', language: 'en-US' }, true],
      [{ kind: 'url', url: h.url('/beep.wav') }, true],
      [{ kind: 'silence', ms: 1000 }, true],
      [{ kind: 'tts', text: 'Thanks', voice: 'man', language: 'en-US' }, undefined],
    ]);
    expect(h.media.ops('collect').map((c) => c.opts)).toEqual([
      { timeoutSeconds: 7, finishOnKey: '*', numDigits: 4 },
    ]);
    const [pin] = h.server.requestsTo('/pin');
    const p = paramsOf(pin!);
    expect(p.get('Digits')).toBe('1234');
    expect(p.get('FinishedOnKey')).toBe('*');
    expect(p.get('CallStatus')).toBe('in-progress');
    expect(p.get('CallSid')).toBe(CALL);
  });

  it('a key during a prompt interrupts the remaining prompts; no action → the document URL', async () => {
    h.media.playScript = () => 'hold';
    h.media.collectResults.push({ digits: '5', reason: 'timeout' });
    h.server.script(
      '/voice',
      { body: xml('<Gather><Say>one</Say><Say>two</Say></Gather>') },
      { body: xml('') },
    );
    const actor = h.start();
    await inState(actor, 'executing.running.gather');
    await vi.waitFor(() => expect(h.media.ops('play')).toHaveLength(1));
    h.media.pressKey(CALL, '5');
    await inState(actor, 'hungUp');
    expect(h.media.ops('play')).toHaveLength(1);
    const reqs = h.server.requestsTo('/voice');
    expect(reqs).toHaveLength(2);
    expect(paramsOf(reqs[1]!).get('Digits')).toBe('5');
    expect(paramsOf(reqs[1]!).get('FinishedOnKey')).toBe('');
  });

  it('no input (timeout) falls through to the next verb without requesting action', async () => {
    h.media.collectResults.push({ digits: '', reason: 'timeout' });
    h.server.script('/voice', {
      body: xml('<Gather action="/pin"><Say>PIN?</Say></Gather><Say>Goodbye</Say>'),
    });
    await h.run();
    expect(h.server.requestsTo('/pin')).toHaveLength(0);
    expect(h.media.ops('play').map((p) => (p.source.kind === 'tts' ? p.source.text : ''))).toEqual([
      'PIN?',
      'Goodbye',
    ]);
    expect(h.intents.at(-1)).toEqual({ type: 'hangup' });
  });
});

describe('Record', () => {
  it('records, creates a Recording and posts RecordingUrl/Duration/Sid and Digits to action', async () => {
    h.media.recordResults.push({ durationSeconds: 7.4, digits: '#', reason: 'finish-key' });
    h.server.script('/voice', {
      body: xml(
        '<Record action="/done" method="GET" timeout="3" finishOnKey="#" maxLength="30" playBeep="false" recordingStatusCallback="/rs"/>',
      ),
    });
    h.server.script('/done', { body: xml('<Hangup/>') });
    h.server.script('/rs', { body: '' });
    await h.run();
    const [rec] = h.media.ops('record');
    expect(rec?.opts).toMatchObject({
      maxLengthSeconds: 30,
      silenceTimeoutSeconds: 3,
      finishOnKey: '#',
      playBeep: false,
    });
    expect(rec?.opts.recordingSid).toMatch(/^RE[0-9a-f]{32}$/);
    expect(h.recordings).toEqual([
      { recordingSid: rec!.opts.recordingSid, accountSid: ACCOUNT, callSid: CALL, durationSeconds: 7.4 },
    ]);
    const [done] = h.server.requestsTo('/done');
    expect(done?.method).toBe('GET');
    const p = paramsOf(done!);
    expect(p.get('RecordingUrl')).toBe(
      `http://api.test/2012-04-24/Accounts/${ACCOUNT}/Recordings/${rec!.opts.recordingSid}`,
    );
    expect(p.get('RecordingDuration')).toBe('7');
    expect(p.get('RecordingSid')).toBe(rec!.opts.recordingSid);
    expect(p.get('Digits')).toBe('#');
    await vi.waitFor(() => expect(h.server.requestsTo('/rs')).toHaveLength(1));
    const rs = paramsOf(h.server.requestsTo('/rs')[0]!);
    expect(rs.get('RecordingStatus')).toBe('completed');
    expect(rs.get('RecordingSid')).toBe(rec!.opts.recordingSid);
  });

  it('nothing recorded → no Recording, next verb; a failure → Notification, next verb', async () => {
    h.media.recordResults.push({ durationSeconds: 0, digits: '', reason: 'silence' }, { fail: 'disk full' });
    h.server.script('/voice', {
      body: xml('<Record action="/done"/><Record action="/done"/><Say>bye</Say>'),
    });
    await h.run();
    expect(h.recordings).toEqual([]);
    expect(h.server.requestsTo('/done')).toHaveLength(0);
    expect(h.notifications).toMatchObject([
      { errorCode: 12400, messageText: expect.stringContaining('disk full') },
    ]);
    expect(h.media.ops('play')).toHaveLength(1);
  });
});

describe('Dial', () => {
  it('bare number: asks the Dialer, then posts DialCallStatus/DialCallSid/DialCallDuration to action', async () => {
    h.dialer.outcomes.push({ status: 'completed', dialCallSid: 'CAchild', durationSeconds: 42.2 });
    h.server.script('/voice', {
      body: xml(
        '<Dial action="/dialed" timeout="20" timeLimit="600" callerId="+15559990000" record="true">+15557654321</Dial>',
      ),
    });
    h.server.script('/dialed', { body: xml('<Hangup/>') });
    await h.run();
    expect(h.dialer.requests).toEqual([
      {
        callSid: CALL,
        accountSid: ACCOUNT,
        endpointId: CALL,
        callerId: '+15559990000',
        targets: [{ kind: 'number', number: '+15557654321', sendDigits: null, url: null, method: 'POST' }],
        timeoutSeconds: 20,
        timeLimitSeconds: 600,
        record: 'record-from-answer',
        hangupOnStar: false,
      },
    ]);
    const p = paramsOf(h.server.requestsTo('/dialed')[0]!);
    expect([p.get('DialCallStatus'), p.get('DialCallSid'), p.get('DialCallDuration')]).toEqual([
      'completed',
      'CAchild',
      '42',
    ]);
    expect(h.intents).toEqual([{ type: 'answer' }, { type: 'hangup' }]);
  });

  it.each(['busy', 'no-answer', 'failed'] as const)('%s is posted to action', async (status) => {
    h.dialer.outcomes.push({ status, dialCallSid: null, durationSeconds: 0, sipResponseCode: 486 });
    h.server.script('/voice', { body: xml('<Dial action="/dialed"><Client>bob</Client></Dial>') });
    h.server.script('/dialed', { body: xml('') });
    await h.run();
    const p = paramsOf(h.server.requestsTo('/dialed')[0]!);
    expect(p.get('DialCallStatus')).toBe(status);
    expect(p.get('DialCallSid')).toBeNull();
    expect(p.get('DialCallDuration')).toBe('0');
    expect(p.get('DialSipResponseCode')).toBe('486');
  });

  it('nouns become targets; callerId defaults to From; no action → next verb', async () => {
    h.dialer.outcomes.push({ status: 'no-answer', dialCallSid: null, durationSeconds: 0 });
    h.server.script('/voice', {
      body: xml(
        '<Dial><Number sendDigits="1w2" url="/whisper">+15551230000</Number><Client>alice</Client>' +
          '<Sip username="u" password="p">sip:bob@example.com</Sip></Dial><Say>nobody</Say>',
      ),
    });
    await h.run();
    expect(h.dialer.requests[0]?.callerId).toBe('+15550001111');
    expect(h.dialer.requests[0]?.targets).toEqual([
      { kind: 'number', number: '+15551230000', sendDigits: '1w2', url: h.url('/whisper'), method: 'POST' },
      { kind: 'client', name: 'alice', url: null, method: 'POST' },
      { kind: 'sip', uri: 'sip:bob@example.com', username: 'u', password: 'p', url: null, method: 'POST' },
    ]);
    expect(h.media.ops('play').map((p) => (p.source.kind === 'tts' ? p.source.text : ''))).toEqual([
      'nobody',
    ]);
  });

  it('Conference joins the account-scoped room until it leaves, then posts to action', async () => {
    h.server.script('/voice', {
      body: xml(
        '<Dial action="/after"><Conference muted="true" beep="false" waitUrl="/hold.wav">room1</Conference></Dial>',
      ),
    });
    h.server.script('/after', { body: xml('') });
    const actor = h.start();
    await vi.waitFor(() => expect(h.media.ops('conferenceJoin')).toHaveLength(1));
    expect(h.media.ops('conferenceJoin')[0]?.opts).toEqual({
      room: `${ACCOUNT}:room1`,
      muted: true,
      beep: false,
      waitMusic: { kind: 'url', url: h.url('/hold.wav') },
    });
    h.media.kickFromConference(CALL);
    await inState(actor, 'hungUp');
    expect(paramsOf(h.server.requestsTo('/after')[0]!).get('DialCallStatus')).toBe('completed');
    expect(h.media.ops('conferenceLeave')).toHaveLength(0);
  });

  it('the caller hanging up aborts the dial (the Dialer ends its legs)', async () => {
    h.server.script('/voice', { body: xml('<Dial>+15557654321</Dial>') });
    const actor = h.start();
    await inState(actor, 'executing.running.dial');
    actor.send({ type: 'call.ended' });
    expect(actor.getSnapshot().output).toEqual({ end: 'call-ended' });
    expect(h.dialer.aborted).toHaveLength(1);
    expect(h.intents).toEqual([{ type: 'answer' }]);
  });

  it('the caller hanging up while in a conference leaves the room', async () => {
    h.server.script('/voice', { body: xml('<Dial><Conference>r</Conference></Dial>') });
    const actor = h.start();
    await inState(actor, 'executing.running.dial');
    await vi.waitFor(() => expect(h.media.ops('conferenceJoin')).toHaveLength(1));
    actor.send({ type: 'call.ended' });
    expect(h.media.ops('conferenceLeave')).toEqual([{ op: 'conferenceLeave', endpointId: CALL }]);
  });
});

describe('Hangup, Reject', () => {
  it('Hangup ends the call; later verbs do not run', async () => {
    h.server.script('/voice', { body: xml('<Say>hi</Say><Hangup/><Say>never</Say>') });
    expect(await h.run()).toEqual({ end: 'hangup' });
    expect(h.media.ops('play')).toHaveLength(1);
    expect(h.intents).toEqual([{ type: 'answer' }, { type: 'hangup' }]);
  });

  it.each([
    ['busy', 'busy'],
    ['rejected', 'rejected'],
  ])('Reject reason=%s before answer rejects without answering', async (reason, expected) => {
    h.server.script('/voice', { body: xml(`<Reject reason="${reason}"/><Say>never</Say>`) });
    expect(await h.run()).toEqual({ end: 'rejected', reason: expected });
    expect(h.intents).toEqual([{ type: 'reject', reason: expected }]);
    expect(h.media.commands).toEqual([]);
  });

  it('Reject after answer: Notification 12200 and hangup', async () => {
    h.server.script('/voice', { body: xml('<Say>hi</Say><Reject reason="busy"/>') });
    expect(await h.run()).toEqual({ end: 'hangup' });
    expect(h.intents).toEqual([{ type: 'answer' }, { type: 'hangup' }]);
    expect(h.notifications).toMatchObject([
      { errorCode: 12200, messageText: expect.stringContaining('Reject') },
    ]);
  });

  it('Reject on a call that was answered before markup (outbound) hangs up', async () => {
    h.server.script('/voice', { body: xml('<Reject/>') });
    expect(await h.run({ answered: true })).toEqual({ end: 'hangup' });
    expect(h.intents).toEqual([{ type: 'hangup' }]);
  });
});

describe('Sms, Email', () => {
  it('Sms defaults to caller/called, posts SmsSid/SmsStatus to action', async () => {
    h.server.script('/voice', {
      body: xml('<Sms action="/sent" statusCallback="/st">Your code is 1234</Sms>'),
    });
    h.server.script('/sent', { body: xml('') });
    await h.run();
    expect(h.sms).toEqual([
      {
        accountSid: ACCOUNT,
        callSid: CALL,
        from: '+15550002222',
        to: '+15550001111',
        body: 'Your code is 1234',
        statusCallback: h.url('/st'),
      },
    ]);
    const p = paramsOf(h.server.requestsTo('/sent')[0]!);
    expect([p.get('SmsSid'), p.get('SmsStatus')]).toEqual([`SM${'1'.repeat(32)}`, 'sent']);
    // Sms is not a media verb: no answer.
    expect(h.intents).toEqual([{ type: 'hangup' }]);
  });

  it('Sms failure: Notification, SmsStatus=failed', async () => {
    await h.close();
    h = await createHarness({
      sendSms: async () => {
        throw new Error('no route');
      },
    });
    h.server.script('/voice', { body: xml('<Sms to="+15550009999" action="/sent">x</Sms>') });
    h.server.script('/sent', { body: xml('') });
    await h.run();
    expect(paramsOf(h.server.requestsTo('/sent')[0]!).get('SmsStatus')).toBe('failed');
    expect(h.notifications).toMatchObject([
      { errorCode: 12400, messageText: expect.stringContaining('no route') },
    ]);
  });

  it('Email sends and continues', async () => {
    h.server.script('/voice', {
      body: xml(
        '<Email to="a@example.com" from="b@example.com" subject="Hi" type="text/html">Body</Email><Say>x</Say>',
      ),
    });
    await h.run();
    expect(h.emails).toEqual([
      {
        accountSid: ACCOUNT,
        callSid: CALL,
        to: 'a@example.com',
        from: 'b@example.com',
        cc: null,
        bcc: null,
        subject: 'Hi',
        body: 'Body',
        type: 'text/html',
      },
    ]);
    expect(h.media.ops('play')).toHaveLength(1);
  });
});
