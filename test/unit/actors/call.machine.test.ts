import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createActor } from 'xstate';
import { callMachine, statusOf } from '../../../src/actors/call/call.machine.js';
import type { CallEmitted, CallInput } from '../../../src/actors/call/call.types.js';

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

function start(input: Partial<CallInput> = {}, snapshot?: unknown) {
  const actor = createActor(callMachine, {
    input: {
      sid: 'CA1',
      accountSid: 'AC1',
      direction: 'outbound-api',
      from: '+15550001111',
      to: '+15550002222',
      createdAt: Date.now(),
      timeoutSeconds: 30,
      ...input,
    },
    ...(snapshot ? { snapshot: snapshot as never } : {}),
  });
  const emitted: CallEmitted[] = [];
  actor.on('*', (e) => emitted.push(e as CallEmitted));
  actor.start();
  return { actor, emitted, types: () => emitted.map((e) => e.type) };
}

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

describe('outbound call leg', () => {
  it('queued → dialing → ringing → in-progress → completed, one ended event with the duration', () => {
    const { actor, emitted, types } = start();
    expect(statusOf(actor.getSnapshot())).toBe('queued');
    actor.send({ type: 'call.dial', at: Date.now() });
    expect(statusOf(actor.getSnapshot())).toBe('queued');
    actor.send({ type: 'sip.ringing', at: Date.now() });
    expect(statusOf(actor.getSnapshot())).toBe('ringing');
    vi.advanceTimersByTime(5000);
    actor.send({ type: 'sip.answered', at: Date.now() });
    expect(statusOf(actor.getSnapshot())).toBe('in-progress');
    vi.advanceTimersByTime(42_000);
    actor.send({ type: 'sip.bye', at: Date.now() });
    expect(statusOf(actor.getSnapshot())).toBe('completed');
    expect(actor.getSnapshot().status).toBe('done');
    expect(types()).toEqual(['sip.placeCall', 'call.status', 'call.status', 'call.ended']);
    expect(emitted.at(-1)).toMatchObject({ status: 'completed', duration: 42 });
  });

  it.each([
    [486, 'busy'],
    [600, 'busy'],
    [603, 'busy'],
    [480, 'no-answer'],
    [487, 'no-answer'],
    [404, 'failed'],
    [503, 'failed'],
  ])('SIP %i maps to %s', (status, expected) => {
    const { actor, emitted } = start();
    actor.send({ type: 'call.dial', at: Date.now() });
    actor.send({ type: 'sip.failed', status, at: Date.now() });
    expect(statusOf(actor.getSnapshot())).toBe(expected);
    expect(actor.getSnapshot().context.sipStatus).toBe(status);
    expect(emitted.filter((e) => e.type === 'call.ended')).toHaveLength(1);
  });

  it('no answer within Timeout → no-answer and the INVITE is canceled', () => {
    const { actor, types } = start({ timeoutSeconds: 20 });
    actor.send({ type: 'call.dial', at: Date.now() });
    actor.send({ type: 'sip.ringing', at: Date.now() });
    vi.advanceTimersByTime(19_999);
    expect(statusOf(actor.getSnapshot())).toBe('ringing');
    vi.advanceTimersByTime(1);
    expect(statusOf(actor.getSnapshot())).toBe('no-answer');
    expect(types()).toEqual(['sip.placeCall', 'call.status', 'sip.cancel', 'call.ended']);
  });

  it('a restored actor re-arms its ring timer from the absolute deadline', () => {
    const first = start({ timeoutSeconds: 20 });
    first.actor.send({ type: 'call.dial', at: Date.now() });
    first.actor.send({ type: 'sip.ringing', at: Date.now() });
    const persisted = JSON.parse(JSON.stringify(first.actor.getPersistedSnapshot()));
    first.actor.stop();
    vi.advanceTimersByTime(15_000);
    const restored = start({}, persisted);
    restored.actor.send({ type: 'call.restored' });
    expect(statusOf(restored.actor.getSnapshot())).toBe('ringing');
    expect(restored.types()).toEqual([]); // nothing re-sent
    vi.advanceTimersByTime(4_999);
    expect(statusOf(restored.actor.getSnapshot())).toBe('ringing');
    vi.advanceTimersByTime(1);
    expect(statusOf(restored.actor.getSnapshot())).toBe('no-answer');
  });

  it('REST cancel while queued or ringing → canceled; cancel does not touch an answered call', () => {
    const q = start();
    q.actor.send({ type: 'http.cancel', at: Date.now() });
    expect(statusOf(q.actor.getSnapshot())).toBe('canceled');
    expect(q.types()).toEqual(['call.ended']);

    const r = start();
    r.actor.send({ type: 'call.dial', at: Date.now() });
    r.actor.send({ type: 'sip.ringing', at: Date.now() });
    r.actor.send({ type: 'http.cancel', at: Date.now() });
    expect(statusOf(r.actor.getSnapshot())).toBe('canceled');
    expect(r.types()).toContain('sip.cancel');

    const a = start();
    a.actor.send({ type: 'call.dial', at: Date.now() });
    a.actor.send({ type: 'sip.answered', at: Date.now() });
    expect(a.actor.getSnapshot().can({ type: 'http.cancel', at: Date.now() })).toBe(false);
    expect(a.actor.getSnapshot().can({ type: 'http.complete', at: Date.now() })).toBe(true);
  });

  it('BYE, REST hangup and timeout at the same moment end the call once', () => {
    const { actor, emitted } = start();
    actor.send({ type: 'call.dial', at: Date.now() });
    actor.send({ type: 'sip.answered', at: Date.now() });
    actor.send({ type: 'http.complete', at: Date.now() });
    // The racing BYE and app hang-up find no transition; the runtime asks `can` (and the SIP port
    // gives one terminal event per leg) instead of sending events to an actor that has stopped.
    expect(actor.getSnapshot().can({ type: 'sip.bye', at: Date.now() })).toBe(false);
    expect(actor.getSnapshot().can({ type: 'app.hangup', at: Date.now() })).toBe(false);
    vi.advanceTimersByTime(120_000);
    expect(emitted.filter((e) => e.type === 'call.ended')).toHaveLength(1);
    expect(emitted.filter((e) => e.type === 'sip.hangUp')).toHaveLength(1);
    expect(statusOf(actor.getSnapshot())).toBe('completed');
  });
});

describe('inbound call leg', () => {
  it('starts ringing; the app answers, then hangs up', () => {
    const { actor, types } = start({ direction: 'inbound' });
    expect(statusOf(actor.getSnapshot())).toBe('ringing');
    vi.advanceTimersByTime(120_000); // no ring timeout for inbound legs
    expect(statusOf(actor.getSnapshot())).toBe('ringing');
    actor.send({ type: 'app.answer', at: Date.now() });
    actor.send({ type: 'app.hangup', at: Date.now() });
    expect(types()).toEqual(['sip.answer', 'call.status', 'sip.hangUp', 'call.ended']);
    expect(statusOf(actor.getSnapshot())).toBe('completed');
  });

  it('Reject busy → 486 and busy; Reject rejected → 603 and no-answer', () => {
    const b = start({ direction: 'inbound' });
    b.actor.send({ type: 'app.reject', reason: 'busy', at: Date.now() });
    expect(b.emitted[0]).toEqual({ type: 'sip.reject', callSid: 'CA1', status: 486 });
    expect(statusOf(b.actor.getSnapshot())).toBe('busy');
    const r = start({ direction: 'inbound' });
    r.actor.send({ type: 'app.reject', reason: 'rejected', at: Date.now() });
    expect(r.emitted[0]).toEqual({ type: 'sip.reject', callSid: 'CA1', status: 603 });
    expect(statusOf(r.actor.getSnapshot())).toBe('no-answer');
  });

  it('the caller canceling while the markup is fetched → canceled, once', () => {
    const { actor, emitted } = start({ direction: 'inbound' });
    actor.send({ type: 'sip.cancel', at: Date.now() });
    // The answer that comes too late has no transition (CallRuntime.answer checks the status first).
    expect(actor.getSnapshot().can({ type: 'app.answer', at: Date.now() })).toBe(false);
    expect(statusOf(actor.getSnapshot())).toBe('canceled');
    expect(emitted.map((e) => e.type)).toEqual(['call.ended']);
  });
});
