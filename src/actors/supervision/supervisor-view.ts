/**
 * What a supervisor sees (spec §Supervisor metrics; Restcomm's Supervisor API fills in what the spec
 * leaves open): the live calls of this node and the figures accumulated since it started, kept
 * current by the call's domain events alone (it is a `CallObserver` on the call event bus and never
 * reads Postgres). Every figure is also kept per account, so an account administrator can be shown
 * its own tree (`Scope=account`).
 *
 * Memory is bounded by the live calls, the accounts that had calls and, per account, at most one
 * duration bucket per minute of the last 24 hours.
 */
import type { CallStatus } from '../../store/call-store.js';
import type { CallContext, CallEmitted, CallOrigin } from '../call/call.types.js';
import { DurationWindow } from './duration-window.js';

/** Call states as Restcomm's live call details name them. */
export const LiveCallState = {
  Queued: 'QUEUED',
  Ringing: 'RINGING',
  InProgress: 'IN_PROGRESS',
} as const;
export type LiveCallState = (typeof LiveCallState)[keyof typeof LiveCallState];

/** What the far end of the leg is, from the shape of its address (Restcomm's CreateCallType). */
export const LiveCallType = { Client: 'CLIENT', Pstn: 'PSTN', Sip: 'SIP', Ussd: 'USSD' } as const;
export type LiveCallType = (typeof LiveCallType)[keyof typeof LiveCallType];

/** One live call leg. Times are epoch ms. */
export interface LiveCall {
  readonly sid: string;
  readonly accountSid: string;
  readonly state: LiveCallState;
  readonly type: LiveCallType;
  readonly direction: CallOrigin['direction'];
  readonly dateCreated: number;
  readonly forwardedFrom: string | null;
  readonly callerName: string | null;
  readonly from: string;
  readonly to: string;
  /** The SIP URI the leg was addressed to, once known (see `initialInviteOf`). */
  readonly initialInvite: string | null;
  /** The last SIP status of the leg's INVITE transaction. */
  readonly lastResponse: number | null;
}

/** The call figures of the supervisor metrics (spec §Supervisor metrics `Metrics`, calls part). */
export interface CallFigures {
  readonly LiveCalls: number;
  readonly LiveIncomingCalls: number;
  readonly LiveOutgoingCalls: number;
  readonly MaximumConcurrentCalls: number;
  readonly MaximumConcurrentIncomingCalls: number;
  readonly MaximumConcurrentOutgoingCalls: number;
  readonly TotalCallsSinceUptime: number;
  readonly IncomingCallsSinceUptime: number;
  readonly OutgoingCallsSinceUptime: number;
  readonly CompletedCalls: number;
  readonly NoAnswerCalls: number;
  readonly BusyCalls: number;
  readonly FailedCalls: number;
  readonly NotFoundCalls: number;
  readonly CanceledCalls: number;
  readonly AverageCallDurationInSecondsLast24Hours: number;
  readonly AverageCallDurationInSecondsLastHour: number;
}

type Counter = Exclude<
  keyof CallFigures,
  | 'LiveCalls'
  | 'LiveIncomingCalls'
  | 'LiveOutgoingCalls'
  | 'AverageCallDurationInSecondsLast24Hours'
  | 'AverageCallDurationInSecondsLastHour'
>;

const ENDED_COUNTER: Partial<Record<CallStatus, Counter>> = {
  completed: 'CompletedCalls',
  'no-answer': 'NoAnswerCalls',
  busy: 'BusyCalls',
  failed: 'FailedCalls',
  canceled: 'CanceledCalls',
};

/** Live and accumulated figures of one scope (the node, or one account). */
class Tally {
  live = 0;
  liveIn = 0;
  liveOut = 0;
  readonly counters: Record<Counter, number> = {
    MaximumConcurrentCalls: 0,
    MaximumConcurrentIncomingCalls: 0,
    MaximumConcurrentOutgoingCalls: 0,
    TotalCallsSinceUptime: 0,
    IncomingCallsSinceUptime: 0,
    OutgoingCallsSinceUptime: 0,
    CompletedCalls: 0,
    NoAnswerCalls: 0,
    BusyCalls: 0,
    FailedCalls: 0,
    NotFoundCalls: 0,
    CanceledCalls: 0,
  };
  readonly durations = new DurationWindow();

  started(inbound: boolean): void {
    const c = this.counters;
    this.live++;
    if (inbound) this.liveIn++;
    else this.liveOut++;
    c.MaximumConcurrentCalls = Math.max(c.MaximumConcurrentCalls, this.live);
    c.MaximumConcurrentIncomingCalls = Math.max(c.MaximumConcurrentIncomingCalls, this.liveIn);
    c.MaximumConcurrentOutgoingCalls = Math.max(c.MaximumConcurrentOutgoingCalls, this.liveOut);
  }

  stopped(inbound: boolean): void {
    this.live--;
    if (inbound) this.liveIn--;
    else this.liveOut--;
  }
}

const isInbound = (call: Pick<CallOrigin, 'direction'>) => call.direction === 'inbound';

/** CLIENT for `client:` addresses, SIP for SIP URIs, PSTN for numbers (the far end of the leg). */
export function callTypeOf(call: Pick<CallOrigin, 'direction' | 'from' | 'to' | 'channel'>): LiveCallType {
  if (call.channel === 'ussd') return LiveCallType.Ussd;
  const far = isInbound(call) ? call.from : call.to;
  if (/^client:/i.test(far)) return LiveCallType.Client;
  if (/^sips?:/i.test(far) || far.includes('@')) return LiveCallType.Sip;
  return LiveCallType.Pstn;
}

/**
 * The URI the leg's INVITE was addressed to, derived from the call: the To URI of its dialog once
 * there is one (ours on an inbound leg, the peer's on an outbound one: the Request-URI of an initial
 * INVITE unless a proxy retargeted it), else a SIP URI dialled by the leg; null until then.
 */
export function initialInviteOf(call: Pick<CallContext, 'sip' | 'origin'>): string | null {
  const d = call.sip.dialog;
  if (d) return d.role === 'uas' ? d.local.uri : d.remote.uri;
  if (!isInbound(call.origin) && /^sips?:/i.test(call.origin.to)) return call.origin.to;
  return null;
}

function stateOf(e: CallEmitted, previous: LiveCallState | undefined): LiveCallState {
  if (e.call.answeredAt !== null) return LiveCallState.InProgress;
  if (e.type === 'call.ringing' || previous === LiveCallState.Ringing) return LiveCallState.Ringing;
  // An inbound leg rings from its creation (the machine sends 180 at once).
  return isInbound(e.call.origin) ? LiveCallState.Ringing : LiveCallState.Queued;
}

function lastResponseOf(e: CallEmitted, previous: number | null): number | null {
  if (e.call.sip.outcome) return e.call.sip.outcome.status;
  if (e.call.answeredAt !== null) return 200;
  if (e.type === 'call.ringing') return 180;
  return previous;
}

export interface DurationTotals {
  readonly sum: number;
  readonly count: number;
}

/** Whole-second average (0 when no call). */
export const averageOf = (t: DurationTotals): number => (t.count === 0 ? 0 : Math.round(t.sum / t.count));

/** Recently ended sids remembered, so an event arriving after `call.ended` cannot revive a call. */
const ENDED_MEMORY = 4096;

export class SupervisorView {
  private readonly live = new Map<string, LiveCall>();
  private readonly node = new Tally();
  private readonly accounts = new Map<string, Tally>();
  private readonly ended = new Set<string>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The bus observer; synchronous and cheap (returns nothing, so the bus never awaits it). */
  readonly observe = (e: CallEmitted): void => {
    const sid = e.call.origin.sid;
    if (e.type === 'call.ended') {
      this.end(e);
      return;
    }
    if (e.type === 'verb.started' || e.type === 'verb.finished') return;
    if (e.call.endedAt !== null || this.ended.has(sid)) return;
    const previous = this.live.get(sid);
    if (!previous) this.start(e);
    this.live.set(sid, this.detailsOf(e, previous));
  };

  /** Figures of the node, or of the calls of the given accounts only. */
  figures(accounts?: ReadonlySet<string>): CallFigures {
    const tallies = this.talliesOf(accounts);
    const sum = (pick: (t: Tally) => number) => tallies.reduce((n, t) => n + pick(t), 0);
    const counters = {} as Record<Counter, number>;
    for (const key of Object.keys(this.node.counters) as Counter[])
      counters[key] = sum((t) => t.counters[key]);
    const { hour, day } = this.durationTotals(accounts);
    return {
      LiveCalls: sum((t) => t.live),
      LiveIncomingCalls: sum((t) => t.liveIn),
      LiveOutgoingCalls: sum((t) => t.liveOut),
      ...counters,
      AverageCallDurationInSecondsLast24Hours: averageOf(day),
      AverageCallDurationInSecondsLastHour: averageOf(hour),
    };
  }

  /** Sum and count of answered call durations (seconds) of the last hour and day: averages combine exactly. */
  durationTotals(accounts?: ReadonlySet<string>): { hour: DurationTotals; day: DurationTotals } {
    const tallies = this.talliesOf(accounts);
    const now = this.now();
    const over = (minutes: number) =>
      tallies
        .map((t) => t.durations.totals(now, minutes))
        .reduce((a, b) => ({ sum: a.sum + b.sum, count: a.count + b.count }), { sum: 0, count: 0 });
    return { hour: over(60), day: over(1440) };
  }

  /** Live calls, oldest first; only those of the given accounts when given. */
  liveCalls(accounts?: ReadonlySet<string>): LiveCall[] {
    const all = [...this.live.values()];
    return accounts ? all.filter((c) => accounts.has(c.accountSid)) : all;
  }

  private talliesOf(accounts: ReadonlySet<string> | undefined): Tally[] {
    return accounts ? [...accounts].flatMap((a) => this.accounts.get(a) ?? []) : [this.node];
  }

  private tallyOf(accountSid: string): Tally {
    let t = this.accounts.get(accountSid);
    if (!t) {
      t = new Tally();
      this.accounts.set(accountSid, t);
    }
    return t;
  }

  private start(e: CallEmitted): void {
    const inbound = isInbound(e.call.origin);
    const tallies = [this.node, this.tallyOf(e.call.origin.accountSid)];
    for (const t of tallies) t.started(inbound);
    // A call restored from another node's snapshot was counted there; only a new one counts here.
    if (e.type !== 'call.created') return;
    for (const t of tallies) {
      t.counters.TotalCallsSinceUptime++;
      t.counters[inbound ? 'IncomingCallsSinceUptime' : 'OutgoingCallsSinceUptime']++;
    }
  }

  private end(e: Extract<CallEmitted, { type: 'call.ended' }>): void {
    const sid = e.call.origin.sid;
    this.ended.add(sid);
    if (this.ended.size > ENDED_MEMORY) this.ended.delete(this.ended.values().next().value as string);
    const tallies = [this.node, this.tallyOf(e.call.origin.accountSid)];
    if (this.live.delete(sid)) for (const t of tallies) t.stopped(isInbound(e.call.origin));
    const counter = ENDED_COUNTER[e.status];
    for (const t of tallies) {
      if (counter) t.counters[counter]++;
      if (e.sipStatus === 404) t.counters.NotFoundCalls++;
      if (e.call.answeredAt !== null) t.durations.add(e.at, e.duration);
    }
  }

  private detailsOf(e: CallEmitted, previous: LiveCall | undefined): LiveCall {
    const c = e.call;
    return {
      sid: c.origin.sid,
      accountSid: c.origin.accountSid,
      state: stateOf(e, previous?.state),
      type: callTypeOf(c.origin),
      direction: c.origin.direction,
      dateCreated: c.origin.createdAt,
      forwardedFrom: c.origin.forwardedFrom,
      callerName: c.origin.callerName,
      from: c.origin.from,
      to: c.origin.to,
      initialInvite: initialInviteOf(c) ?? previous?.initialInvite ?? null,
      lastResponse: lastResponseOf(e, previous?.lastResponse ?? null),
    };
  }
}
