/**
 * The supervisor's view fed call events directly: live calls with their details, counters since
 * uptime by direction and outcome, concurrency maxima, per-minute duration averages, per-account
 * scope, and events arriving after a call's end.
 */
import { describe, expect, it } from 'vitest';
import { initialContext } from '../../../../src/actors/call/call.setup.js';
import type {
  CallContext,
  CallEmitted,
  CallInput,
  CallOrigin,
} from '../../../../src/actors/call/call.types.js';
import {
  metricsOf,
  publishedFigures,
  sumFigures,
} from '../../../../src/actors/supervision/cluster-figures.js';
import { DurationWindow } from '../../../../src/actors/supervision/duration-window.js';
import {
  callTypeOf,
  LiveCallState,
  LiveCallType,
  SupervisorView,
} from '../../../../src/actors/supervision/supervisor-view.js';
import type { PersistedDialog } from '../../../../src/sip/port.js';
import type { CallStatus } from '../../../../src/store/call-store.js';

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const ACCOUNT = 'AC00000000000000000000000000000001';
const OTHER = 'AC00000000000000000000000000000002';

function call(over: Partial<CallInput> = {}, ctx: Partial<CallContext> = {}): CallContext {
  return {
    ...initialContext({
      sid: 'CA00000000000000000000000000000001',
      accountSid: ACCOUNT,
      direction: 'inbound',
      from: '+15550001111',
      to: '+15550002222',
      apiVersion: '2012-04-24',
      createdAt: T0,
      ...over,
    }),
    ...ctx,
  };
}

const created = (c: CallContext, at = T0): CallEmitted => ({ type: 'call.created', call: c, at });
const ringing = (c: CallContext, at = T0): CallEmitted => ({ type: 'call.ringing', call: c, at });
const answered = (c: CallContext, at: number): CallEmitted => ({
  type: 'call.answered',
  call: { ...c, answeredAt: at },
  at,
});
function ended(c: CallContext, status: CallStatus, at: number, sipStatus: number | null = null): CallEmitted {
  const duration = c.answeredAt === null ? 0 : Math.round((at - c.answeredAt) / 1000);
  return {
    type: 'call.ended',
    call: { ...c, endedAt: at },
    status,
    cause: 'remote-hangup',
    sipStatus,
    duration,
    at,
  };
}

describe('SupervisorView', () => {
  it('shows an inbound call ringing, then in progress, then gone; counts it once', () => {
    let now = T0;
    const view = new SupervisorView(() => now);
    const c = call({ callerName: 'Alice', forwardedFrom: '+15550003333' });
    view.observe(created(c));
    view.observe(ringing(c));
    expect(view.liveCalls()).toEqual([
      {
        sid: c.origin.sid,
        accountSid: ACCOUNT,
        state: LiveCallState.Ringing,
        type: LiveCallType.Pstn,
        direction: 'inbound',
        dateCreated: T0,
        forwardedFrom: '+15550003333',
        callerName: 'Alice',
        from: '+15550001111',
        to: '+15550002222',
        initialInvite: null,
        lastResponse: 180,
      },
    ]);
    const dialog: PersistedDialog = {
      role: 'uas',
      callId: 'x',
      localTag: 'a',
      remoteTag: 'b',
      local: { uri: 'sip:+15550002222@127.0.0.1' },
      remote: { uri: 'sip:+15550001111@127.0.0.2' },
      localCseq: 0,
      remoteCseq: 1,
      routeSet: [],
      remoteTarget: 'sip:caller@127.0.0.2',
      localContact: 'sip:sb@127.0.0.1',
    };
    const up = { ...c, answeredAt: T0 + 1000 };
    view.observe(answered(c, T0 + 1000));
    view.observe({
      type: 'call.confirmed',
      call: { ...up, sip: { ...up.sip, dialog, confirmed: true } },
      at: T0 + 1100,
    });
    expect(view.liveCalls()[0]).toMatchObject({
      state: LiveCallState.InProgress,
      lastResponse: 200,
      initialInvite: 'sip:+15550002222@127.0.0.1',
    });
    expect(view.figures()).toMatchObject({ LiveCalls: 1, LiveIncomingCalls: 1, LiveOutgoingCalls: 0 });

    now = T0 + 31_000;
    view.observe(ended({ ...up, sip: { ...up.sip, dialog } }, 'completed', now));
    expect(view.liveCalls()).toEqual([]);
    expect(view.figures()).toEqual({
      LiveCalls: 0,
      LiveIncomingCalls: 0,
      LiveOutgoingCalls: 0,
      MaximumConcurrentCalls: 1,
      MaximumConcurrentIncomingCalls: 1,
      MaximumConcurrentOutgoingCalls: 0,
      TotalCallsSinceUptime: 1,
      IncomingCallsSinceUptime: 1,
      OutgoingCallsSinceUptime: 0,
      CompletedCalls: 1,
      NoAnswerCalls: 0,
      BusyCalls: 0,
      FailedCalls: 0,
      NotFoundCalls: 0,
      CanceledCalls: 0,
      AverageCallDurationInSecondsLast24Hours: 30,
      AverageCallDurationInSecondsLastHour: 30,
    });
  });

  it('a bridged Dial is two live calls, one in and one out, with their maxima', () => {
    const view = new SupervisorView(() => T0);
    const parent = call();
    const child = call(
      {
        sid: 'CA00000000000000000000000000000002',
        direction: 'outbound-dial',
        to: 'sip:bob@127.0.0.3:5070',
        parentCallSid: parent.origin.sid,
      },
      {},
    );
    view.observe(created(parent));
    view.observe(created(child));
    expect(view.liveCalls().find((c) => c.sid === child.origin.sid)).toMatchObject({
      state: LiveCallState.Queued,
      type: LiveCallType.Sip,
      initialInvite: 'sip:bob@127.0.0.3:5070',
      lastResponse: null,
    });
    view.observe(ringing(child));
    view.observe(answered(child, T0 + 500));
    view.observe({
      type: 'call.bridged',
      call: { ...child, peer: parent.origin.sid },
      peer: parent.origin.sid,
      at: T0,
    });
    expect(view.figures()).toMatchObject({
      LiveCalls: 2,
      LiveIncomingCalls: 1,
      LiveOutgoingCalls: 1,
      MaximumConcurrentCalls: 2,
      MaximumConcurrentIncomingCalls: 1,
      MaximumConcurrentOutgoingCalls: 1,
      TotalCallsSinceUptime: 2,
      IncomingCallsSinceUptime: 1,
      OutgoingCallsSinceUptime: 1,
    });
    view.observe(ended(child, 'completed', T0 + 2000));
    view.observe(ended(parent, 'completed', T0 + 2000));
    expect(view.figures()).toMatchObject({ LiveCalls: 0, MaximumConcurrentCalls: 2 });
  });

  it('counts each outcome, a 404 as not found too, and unanswered calls stay out of the averages', () => {
    const view = new SupervisorView(() => T0 + 10_000);
    const outcomes: Array<[CallStatus, number | null]> = [
      ['busy', 486],
      ['no-answer', 480],
      ['failed', 404],
      ['failed', 503],
      ['canceled', 487],
    ];
    outcomes.forEach(([status, sip], i) => {
      const c = call({
        sid: `CA${String(i).padStart(32, '0')}`,
        direction: 'outbound-api',
        to: '+15550009999',
      });
      view.observe(created(c));
      view.observe(
        ended(
          { ...c, sip: { ...c.sip, outcome: sip ? { status: sip, reason: null } : null } },
          status,
          T0 + 1000,
          sip,
        ),
      );
    });
    expect(view.figures()).toMatchObject({
      TotalCallsSinceUptime: 5,
      OutgoingCallsSinceUptime: 5,
      BusyCalls: 1,
      NoAnswerCalls: 1,
      FailedCalls: 2,
      NotFoundCalls: 1,
      CanceledCalls: 1,
      CompletedCalls: 0,
      AverageCallDurationInSecondsLastHour: 0,
    });
  });

  it('an event after call.ended does not bring the call back', () => {
    const view = new SupervisorView(() => T0);
    const c = call();
    view.observe(created(c));
    view.observe(ended(c, 'canceled', T0 + 100));
    view.observe({ type: 'call.muted', call: c, muted: true, at: T0 + 200 });
    view.observe({ type: 'verb.finished', call: c, verb: 'Say', seq: 1, outcome: 'hangup', at: T0 + 200 });
    expect(view.liveCalls()).toEqual([]);
    expect(view.figures().LiveCalls).toBe(0);
  });

  it('a call restored from another node is live here but was counted there', () => {
    const view = new SupervisorView(() => T0);
    const c = call({}, { answeredAt: T0 });
    view.observe({ type: 'call.muted', call: c, muted: true, at: T0 });
    expect(view.figures()).toMatchObject({ LiveCalls: 1, TotalCallsSinceUptime: 0 });
    expect(view.liveCalls()[0]?.state).toBe(LiveCallState.InProgress);
  });

  it('scopes figures and live calls to a set of accounts', () => {
    const view = new SupervisorView(() => T0);
    const mine = call();
    const theirs = call({ sid: 'CA00000000000000000000000000000009', accountSid: OTHER });
    view.observe(created(mine));
    view.observe(created(theirs));
    expect(view.figures(new Set([ACCOUNT]))).toMatchObject({ LiveCalls: 1, TotalCallsSinceUptime: 1 });
    expect(view.liveCalls(new Set([OTHER])).map((c) => c.sid)).toEqual([theirs.origin.sid]);
    expect(view.figures(new Set(['AC-none']))).toMatchObject({ LiveCalls: 0, TotalCallsSinceUptime: 0 });
    expect(view.figures()).toMatchObject({ LiveCalls: 2, MaximumConcurrentCalls: 2 });
  });

  it('names the call type from the far end', () => {
    const t = (direction: CallOrigin['direction'], from: string, to: string) =>
      callTypeOf({ direction, from, to });
    expect(t('inbound', 'client:alice', '+15550002222')).toBe(LiveCallType.Client);
    expect(t('inbound', 'alice', '+15550002222')).toBe(LiveCallType.Pstn);
    expect(t('outbound-dial', '+1555', 'client:bob')).toBe(LiveCallType.Client);
    expect(t('outbound-dial', '+1555', 'sip:bob@example.test')).toBe(LiveCallType.Sip);
    expect(t('outbound-api', '+1555', '+15550002222')).toBe(LiveCallType.Pstn);
  });
});

describe('DurationWindow', () => {
  const MIN = 60_000;
  it('averages the last hour and the last day apart', () => {
    const w = new DurationWindow();
    w.add(T0, 100);
    w.add(T0 + 2 * 60 * MIN, 20);
    w.add(T0 + 2 * 60 * MIN + 5, 40);
    const now = T0 + 2 * 60 * MIN + 1000;
    expect(w.average(now, 60)).toBe(30);
    expect(w.average(now, 1440)).toBe(53);
  });

  it('keeps at most one bucket per minute of its span whatever the rate', () => {
    const w = new DurationWindow(1440);
    for (let m = 0; m < 3 * 1440; m++) for (let k = 0; k < 3; k++) w.add(T0 + m * MIN + k, 10);
    expect(w.size).toBe(1440);
    const now = T0 + (3 * 1440 - 1) * MIN;
    expect(w.totals(now, 1440)).toEqual({ sum: 1440 * 30, count: 1440 * 3 });
    expect(w.average(now + 3 * 1440 * MIN, 60)).toBe(0);
  });
});

describe('cluster figures', () => {
  it('publishes averages as sums and counts, so the cluster average is exact', () => {
    const view = new SupervisorView(() => T0 + 60_000);
    const c = call({}, { answeredAt: T0 });
    view.observe(created(c));
    view.observe(ended(c, 'completed', T0 + 30_000));
    const one = publishedFigures(view, null);
    expect(one).toMatchObject({
      TotalCallsSinceUptime: 1,
      DurationSumLastHour: 30,
      DurationCountLastHour: 1,
    });
    expect(one).not.toHaveProperty('AverageCallDurationInSecondsLastHour');
    const other = { ...one, DurationSumLastHour: 90, DurationCountLastHour: 3, TotalCallsSinceUptime: 3 };
    const sum = sumFigures([
      { instanceId: 'a', at: T0, figures: { ...one } },
      { instanceId: 'b', at: T0, figures: other },
    ]);
    expect(sum.TotalCallsSinceUptime).toBe(4);
    const metrics = metricsOf(sum);
    expect(metrics.AverageCallDurationInSecondsLastHour).toBe(30);
    expect(metrics).not.toHaveProperty('DurationSumLastHour');
    expect(metricsOf({}).AverageCallDurationInSecondsLast24Hours).toBe(0);
  });
});
