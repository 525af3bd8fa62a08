/**
 * The interpreter's answer through LegControl over a real call runtime and call machine, with fake
 * effects and SIP/media events sent by the test: the outcome comes back as one event to the asker.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createCallMachine } from '../../../../src/actors/call/call.machine.js';
import type { CallEffects } from '../../../../src/actors/call/call-effects.js';
import { ENDPOINT_TIMEOUT_MS } from '../../../../src/actors/call/call-effects.js';
import { CallEventBus } from '../../../../src/actors/call/call-observers.js';
import { CallRuntime } from '../../../../src/actors/call/call-runtime.js';
import { LegControl } from '../../../../src/actors/call/leg-control.js';
import type { AnswerOutcome } from '../../../../src/actors/interpreter/interpreter.types.js';
import { createLogger } from '../../../../src/logger.js';
import type { MediaEvent } from '../../../../src/media/port.js';
import type { Dialog } from '../../../../src/sip/dialog.js';
import type { SipEvent } from '../../../../src/sip/port.js';

const SID = 'CA00000000000000000000000000000001';
const DIALOG = {
  role: 'uas',
  callId: 'c1@test',
  localTag: 'l',
  remoteTag: 'r',
  local: { uri: 'sip:a@test' },
  remote: { uri: 'sip:b@test' },
  localCseq: 1,
  remoteCseq: 1,
  routeSet: [],
  remoteTarget: 'sip:b@127.0.0.1',
  localContact: 'sip:a@127.0.0.2',
  flow: null,
} satisfies Dialog;

let log: string[];
let sipListeners: Set<(e: SipEvent) => void>;
let mediaListeners: Set<(e: MediaEvent) => void>;
let runtime: CallRuntime;
let legs: LegControl;
let outcomes: AnswerOutcome[];
const replyTo = { send: (e: AnswerOutcome) => void outcomes.push(e) };
const sip = (e: SipEvent) => {
  for (const l of sipListeners) l(e);
};
const media = (e: MediaEvent) => {
  for (const l of mediaListeners) l(e);
};
const flush = () => new Promise((r) => setImmediate(r));

beforeEach(() => {
  log = [];
  outcomes = [];
  sipListeners = new Set();
  mediaListeners = new Set();
  const noop = () => {};
  const effects = new Proxy({} as CallEffects, {
    get: (_t, name: string) =>
      name === 'admit' || name === 'place' || name === 'planRefer' || name === 'sendDigits'
        ? () => new Promise(noop)
        : (sid: unknown, x: unknown) => {
            log.push(typeof x === 'number' || typeof x === 'string' ? `${name} ${x}` : name);
            void sid;
          },
  });
  const logger = createLogger('silent');
  runtime = new CallRuntime({
    sip: {
      onEvent: (l) => {
        sipListeners.add(l);
        return () => sipListeners.delete(l);
      },
      answerRefer: noop,
    },
    media: {
      subscribe: (l) => {
        mediaListeners.add(l);
        return () => mediaListeners.delete(l);
      },
    },
    machine: createCallMachine(effects),
    bus: new CallEventBus(logger),
    calls: { insert: async () => {} },
    instanceId: 'n1',
    callLeaseMs: 30_000,
    stopApps: noop,
    logger,
  });
  legs = new LegControl(runtime, { bridge: noop });
  runtime.spawn({
    sid: SID,
    accountSid: 'AC1',
    direction: 'inbound',
    from: '+15550001111',
    to: '+15550002222',
    apiVersion: '2012-04-24',
    createdAt: Date.now(),
    remoteSdp: 'v=0 theirs',
  });
  log.length = 0;
});
afterEach(() => {
  runtime.stop();
  vi.useRealTimers();
});

const endpointReady = () =>
  media({
    type: 'media.endpointReady',
    endpoint: { endpointId: SID, sdp: 'v=0 ours' } as never,
  });

describe('LegControl.answer', () => {
  it('makes the endpoint, sends 200, and replies call.answered once, on the ACK', async () => {
    legs.answer(SID, replyTo);
    expect(log).toEqual(['createEndpoint v=0 theirs']);
    endpointReady();
    expect(log).toContain('answer v=0 ours');
    expect(runtime.liveStatus(SID)).toBe('in-progress');
    expect(outcomes).toEqual([]);
    sip({ type: 'sip.confirmed', legId: SID, dialog: DIALOG });
    expect(outcomes).toEqual([{ type: 'call.answered' }]);
    sip({ type: 'sip.confirmed', legId: SID, dialog: DIALOG });
    sip({ type: 'sip.bye', legId: SID } as SipEvent);
    await flush();
    expect(outcomes).toEqual([{ type: 'call.answered' }]);
  });

  it('a leg already in progress is answered at once (no second endpoint or 200)', () => {
    legs.answer(SID, replyTo);
    endpointReady();
    log.length = 0;
    const again: AnswerOutcome[] = [];
    legs.answer(SID, { send: (e) => void again.push(e) });
    expect(again).toEqual([{ type: 'call.answered' }]);
    expect(log).toEqual([]);
  });

  it('a leg that is not live: call.answerFailed at once', () => {
    legs.answer('CA_gone', replyTo);
    expect(outcomes).toEqual([{ type: 'call.answerFailed' }]);
  });

  it('the caller cancels while the endpoint is made: call.answerFailed', async () => {
    legs.answer(SID, replyTo);
    sip({ type: 'sip.cancel', legId: SID } as SipEvent);
    expect(runtime.liveStatus(SID) ?? 'gone').not.toBe('in-progress');
    expect(outcomes).toEqual([{ type: 'call.answerFailed' }]);
    // The endpoint's late outcome (the leg is gone) changes nothing.
    await flush();
    endpointReady();
    expect(outcomes).toEqual([{ type: 'call.answerFailed' }]);
  });

  it('the endpoint is not ready by ENDPOINT_TIMEOUT: the leg fails (500) and the answer with it', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    legs.answer(SID, replyTo);
    vi.advanceTimersByTime(ENDPOINT_TIMEOUT_MS - 1);
    expect(outcomes).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(log).toContain('reject 500');
    expect(outcomes).toEqual([{ type: 'call.answerFailed' }]);
  });

  it('200 sent but no ACK (the SIP layer ends the leg): call.answerFailed', () => {
    legs.answer(SID, replyTo);
    endpointReady();
    sip({ type: 'sip.ended', legId: SID, cause: 'ack-timeout' } as SipEvent);
    expect(outcomes).toEqual([{ type: 'call.answerFailed' }]);
  });

  it('a hangup by the app while answering (the interpreter ended it): call.answerFailed', () => {
    legs.answer(SID, replyTo);
    expect(legs.intent(SID, { type: 'app.hangup', at: Date.now() })).toBe(true);
    expect(log).toContain('reject 603');
    expect(outcomes).toEqual([{ type: 'call.answerFailed' }]);
    expect(legs.intent(SID, { type: 'app.hangup', at: Date.now() })).toBe(false);
  });
});
