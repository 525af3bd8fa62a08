/**
 * The supervisor's live view as a stream (docs/supervision.md): a snapshot of the live calls, then
 * ordered deltas (`call.created`, `call.updated`, `call.ended`), each with a node-local `seq` that
 * only grows and the time of the event. It is a `CallObserver` on the call event bus, synchronous,
 * so a snapshot and the subscription that follows it are taken in one turn of the event loop: no
 * event can fall between them.
 *
 * The last `capacity` deltas are kept (serialised once, shared by every subscriber, and only when
 * someone reads them) so a client that reconnects with the last `seq` it saw gets exactly what it
 * missed, or a fresh snapshot when part of it is gone — never a silent gap. Memory is bounded by the
 * live calls and the ring.
 *
 * Deltas for the other nodes leave in batches, one relay message per `relayBatchMs`: a call makes
 * about seven deltas, and a pub/sub message each (sent, then delivered back to every node, this one
 * included) cost more than the rest of the stream's work for it.
 */
import type { CallStatus } from '../../store/call-store.js';
import type { CallContext, CallEmitted, EndCause } from '../call/call.types.js';

/** Frame types, as they appear in `type` on the wire. */
export const StreamEventType = {
  Snapshot: 'snapshot',
  CallCreated: 'call.created',
  CallUpdated: 'call.updated',
  CallEnded: 'call.ended',
  Metrics: 'metrics',
} as const;

/** One live call leg as the stream shows it. Times are epoch ms. */
export interface StreamCall {
  readonly sid: string;
  /** Instance id of the node the leg lives on. */
  readonly node: string;
  readonly accountSid: string;
  readonly parentCallSid: string | null;
  readonly direction: CallContext['direction'];
  readonly from: string;
  readonly to: string;
  /** REST status while live: queued, ringing or in-progress. */
  readonly status: 'queued' | 'ringing' | 'in-progress';
  readonly answered: boolean;
  readonly dateCreated: number;
  readonly answeredAt: number | null;
  /** The leg a `<Dial>` bridged it with. */
  readonly bridged: string | null;
  readonly muted: boolean;
  /** Conference room (`AC…:name`) the leg is in. */
  readonly conference: string | null;
  readonly lastSipStatus: number | null;
  /** The markup verb running now. */
  readonly verb: string | null;
}

export type CallStreamEvent =
  | { type: 'call.created'; seq: number; at: number; call: StreamCall }
  | { type: 'call.updated'; seq: number; at: number; call: StreamCall }
  | {
      type: 'call.ended';
      seq: number;
      at: number;
      call: StreamCall;
      status: CallStatus;
      cause: EndCause;
      sipStatus: number | null;
      /** Seconds answered (0 when never answered). */
      duration: number;
    };

type Unsequenced<T> = T extends unknown ? Omit<T, 'seq'> : never;

/** What a subscriber is sent: JSON text frames. */
export type FrameSink = (frame: string) => void;

/** Which calls a subscriber sees (undefined: every call of the node). */
export type AccountFilter = ReadonlySet<string> | undefined;

export interface Subscription {
  /** The frames to send first, in order: a snapshot, or the missed deltas. */
  readonly initial: readonly string[];
  /** True when `initial` is the replay of the missed deltas rather than a snapshot. */
  readonly resumed: boolean;
  unsubscribe(): void;
}

interface Buffered {
  readonly seq: number;
  readonly accountSid: string;
  readonly event: Unsequenced<CallStreamEvent>;
  /** The JSON frame, rendered when first sent or replayed. */
  frame?: string;
}

interface Subscriber {
  readonly accounts: AccountFilter;
  readonly sink: FrameSink;
}

export interface LiveStreamOptions {
  /** This node's instance id (`StreamCall.node`; other nodes' deltas are told apart by it). */
  readonly node: string;
  /**
   * Hands this node's deltas to the other nodes (JSON text with a batch of deltas in order, see
   * `applyRemote`); absent on a node that shares nothing.
   */
  readonly relay?: (message: string) => void;
  /** The longest a delta waits for others to share its relay message (default 50 ms). */
  readonly relayBatchMs?: number;
  /** Deltas kept for resume. */
  readonly capacity?: number;
  /** The figures sent in snapshots and `metrics` frames, for the subscriber's scope. */
  readonly metrics: (accounts: AccountFilter) => unknown;
  readonly now?: () => number;
}

const DEFAULT_CAPACITY = 10_000;
const DEFAULT_RELAY_BATCH_MS = 50;

function statusOf(c: CallContext, e: CallEmitted, previous: StreamCall | undefined): StreamCall['status'] {
  if (c.answeredAt !== null) return 'in-progress';
  if (e.type === 'call.ringing' || previous?.status === 'ringing') return 'ringing';
  // An inbound leg rings from its creation (the machine sends 180 at once).
  return c.direction === 'inbound' ? 'ringing' : 'queued';
}

function lastSipStatusOf(c: CallContext, e: CallEmitted, previous: StreamCall | undefined): number | null {
  if (c.sipOutcome) return c.sipOutcome.status;
  if (c.answeredAt !== null) return 200;
  if (e.type === 'call.ringing') return 180;
  return previous?.lastSipStatus ?? null;
}

function verbOf(e: CallEmitted, previous: StreamCall | undefined): string | null {
  if (e.type === 'verb.started') return e.verb;
  const running = previous?.verb ?? null;
  return e.type === 'verb.finished' && running === e.verb ? null : running;
}

function projectionOf(node: string, e: CallEmitted, previous: StreamCall | undefined): StreamCall {
  const c = e.call;
  return {
    sid: c.sid,
    node,
    accountSid: c.accountSid,
    parentCallSid: c.parentCallSid,
    direction: c.direction,
    from: c.from,
    to: c.to,
    status: statusOf(c, e, previous),
    answered: c.answeredAt !== null,
    dateCreated: c.createdAt,
    answeredAt: c.answeredAt,
    bridged: c.peer,
    muted: c.muted,
    conference: c.room,
    lastSipStatus: lastSipStatusOf(c, e, previous),
    verb: verbOf(e, previous),
  };
}

function sameCall(a: StreamCall, b: StreamCall): boolean {
  for (const k of Object.keys(a) as (keyof StreamCall)[]) if (a[k] !== b[k]) return false;
  return true;
}

/** Recently ended sids remembered, so an event arriving after `call.ended` cannot revive a call. */
const ENDED_MEMORY = 4096;

export class LiveStream {
  private readonly live = new Map<string, StreamCall>();
  private readonly ended = new Set<string>();
  private readonly ring: (Buffered | undefined)[];
  private readonly subscribers = new Set<Subscriber>();
  private readonly now: () => number;
  private seq = 0;
  /** Deltas waiting for the next relay message. */
  private outbox: Unsequenced<CallStreamEvent>[] = [];
  private relayTimer: NodeJS.Timeout | null = null;
  /** How this node's relay messages begin: its own, coming back, are dropped without parsing. */
  private readonly ownPrefix: string;

  constructor(private readonly options: LiveStreamOptions) {
    this.ring = new Array(options.capacity ?? DEFAULT_CAPACITY);
    this.now = options.now ?? Date.now;
    this.ownPrefix = `{"node":${JSON.stringify(options.node)},`;
  }

  /** The last sequence number given out (0 before the first event). */
  get lastSeq(): number {
    return this.seq;
  }

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  /** The bus observer; synchronous (returns nothing, so the bus never awaits it). */
  readonly observe = (e: CallEmitted): void => {
    const sid = e.call.sid;
    if (this.ended.has(sid)) return;
    const previous = this.live.get(sid);
    if (e.type === 'call.ended') {
      this.forget(sid);
      const call = projectionOf(this.options.node, e, previous);
      const { status, cause, sipStatus, duration } = e;
      this.local({ type: 'call.ended', at: e.at, call, status, cause, sipStatus, duration });
      return;
    }
    if (e.call.endedAt !== null) return;
    const call = projectionOf(this.options.node, e, previous);
    if (previous && sameCall(previous, call)) return;
    // A call restored from another node's snapshot is new to this node's subscribers too.
    this.local({ type: previous ? 'call.updated' : 'call.created', at: e.at, call });
  };

  /**
   * Deltas of another node's calls (the JSON `relay` produced there: `deltas` in order, or one
   * `delta`): numbered in this node's sequence like local ones. Own messages coming back, and
   * anything malformed, are ignored.
   */
  applyRemote(message: string): void {
    if (message.startsWith(this.ownPrefix)) return;
    let parsed: { node?: unknown; delta?: unknown; deltas?: unknown };
    try {
      parsed = JSON.parse(message);
    } catch {
      return;
    }
    if (parsed === null || typeof parsed !== 'object' || parsed.node === this.options.node) return;
    const deltas = Array.isArray(parsed.deltas) ? parsed.deltas : [parsed.delta];
    for (const delta of deltas) this.applyRemoteDelta(delta as Unsequenced<CallStreamEvent> | undefined);
  }

  /** Sends the deltas waiting for the relay now (also before the node closes). */
  flushRelay(): void {
    if (this.relayTimer) clearTimeout(this.relayTimer);
    this.relayTimer = null;
    if (!this.outbox.length || !this.options.relay) return;
    const deltas = this.outbox;
    this.outbox = [];
    this.options.relay(JSON.stringify({ node: this.options.node, deltas }));
  }

  private applyRemoteDelta(delta: Unsequenced<CallStreamEvent> | undefined): void {
    if (typeof delta?.call?.sid !== 'string') return;
    const sid = delta.call.sid;
    if (this.ended.has(sid)) return;
    if (delta.type === 'call.ended') {
      this.forget(sid);
      this.publish(delta);
      return;
    }
    const known = this.live.has(sid);
    this.live.set(sid, delta.call);
    this.publish({ ...delta, type: known ? 'call.updated' : 'call.created' });
  }

  /**
   * Subscribes a client. With `since` (the last seq it saw) and every later delta still in the ring,
   * `initial` is those deltas (of its accounts); otherwise a snapshot. Either way, everything after
   * `initial` reaches `sink` as it happens, and nothing is missed or repeated between the two.
   */
  subscribe(accounts: AccountFilter, sink: FrameSink, since?: number): Subscription {
    const replay = since === undefined ? null : this.replay(accounts, since);
    const initial = replay ?? [this.snapshot(accounts)];
    const subscriber: Subscriber = { accounts, sink };
    this.subscribers.add(subscriber);
    return {
      initial,
      resumed: replay !== null,
      unsubscribe: () => {
        this.subscribers.delete(subscriber);
      },
    };
  }

  /** Sends every subscriber its figures (the `metrics` frame: not replayed, stale figures are no use). */
  publishMetrics(): void {
    const at = this.now();
    const frameOf = (accounts: AccountFilter) =>
      JSON.stringify({ type: 'metrics', seq: this.seq, at, metrics: this.options.metrics(accounts) });
    // The node's figures are the same for every node-wide subscriber: rendered once.
    let nodeFrame: string | undefined;
    for (const s of this.subscribers) {
      if (s.accounts) {
        s.sink(frameOf(s.accounts));
        continue;
      }
      nodeFrame ??= frameOf(undefined);
      s.sink(nodeFrame);
    }
  }

  /** A snapshot frame of the live calls (of the given accounts) at the current seq. */
  snapshot(accounts: AccountFilter): string {
    const calls = [...this.live.values()].filter((c) => !accounts || accounts.has(c.accountSid));
    return JSON.stringify({
      type: 'snapshot',
      seq: this.seq,
      at: this.now(),
      calls,
      metrics: this.options.metrics(accounts),
    });
  }

  private replay(accounts: AccountFilter, since: number): string[] | null {
    if (!Number.isSafeInteger(since) || since < 0 || since > this.seq) return null;
    const capacity = this.ring.length;
    // The oldest seq still held; every delta after `since` must be there.
    const oldest = Math.max(1, this.seq - capacity + 1);
    if (since + 1 < oldest) return null;
    const frames: string[] = [];
    for (let s = since + 1; s <= this.seq; s++) {
      const b = this.ring[s % capacity];
      if (!b || b.seq !== s) return null;
      if (!accounts || accounts.has(b.accountSid)) frames.push(renderFrame(b));
    }
    return frames;
  }

  /** A delta of this node's call: to its subscribers and to the other nodes. */
  private local(event: Unsequenced<CallStreamEvent>): void {
    if (event.type !== 'call.ended') this.live.set(event.call.sid, event.call);
    this.publish(event);
    if (!this.options.relay) return;
    this.outbox.push(event);
    this.relayTimer ??= setTimeout(
      () => this.flushRelay(),
      this.options.relayBatchMs ?? DEFAULT_RELAY_BATCH_MS,
    ).unref();
  }

  private forget(sid: string): void {
    this.ended.add(sid);
    if (this.ended.size > ENDED_MEMORY) this.ended.delete(this.ended.values().next().value as string);
    this.live.delete(sid);
  }

  private publish(event: Unsequenced<CallStreamEvent>): void {
    const seq = ++this.seq;
    const accountSid = event.call.accountSid;
    const buffered: Buffered = { seq, accountSid, event };
    this.ring[seq % this.ring.length] = buffered;
    for (const s of this.subscribers)
      if (!s.accounts || s.accounts.has(accountSid)) s.sink(renderFrame(buffered));
  }
}

/** A buffered delta's frame (`type` and `seq` first), rendered once. */
function renderFrame(b: Buffered): string {
  if (b.frame === undefined) {
    const { type, ...rest } = b.event;
    b.frame = JSON.stringify({ type, seq: b.seq, ...rest });
  }
  return b.frame;
}
