/**
 * The supervisor's live view as a stream (docs/supervision.md): a snapshot of the live calls and
 * registrations, then ordered deltas (`call.created`, `call.updated`, `call.ended`,
 * `registration.changed`), each with a node-local `seq` that only grows and the time of the event.
 * It is a `CallObserver` on the call event bus and a registrar observer, synchronous, so a snapshot
 * and the subscription that follows it are taken in one turn of the event loop: no event can fall
 * between them.
 *
 * Each delta is serialised once. Deltas are sent in batches: those of one flush window
 * (`flushMs`) go to a subscriber as one text frame (a JSON array when more than one), built once
 * for every node-wide subscriber; the relay to the other nodes is one message per window too. Under
 * load that turns one send per client per delta into one per client per window.
 *
 * The last `capacity` deltas are kept so a client that reconnects with the last `seq` it saw gets
 * exactly what it missed, or a fresh snapshot when part of it is gone — never a silent gap. Memory
 * is bounded by the live calls and bindings, the ring and one window of deltas.
 *
 * With `onDemand`, call deltas are numbered, kept, sent and relayed only while some node of the
 * cluster has a subscriber (stream-demand.ts): an unwatched node only keeps its live calls current.
 * Where it stops, the sequence gets a hole (a client resuming across it gets a snapshot); a node that
 * starts watching gets every other node's live calls from them (`sync`) as deltas.
 */
import type { RegistrationChange } from '../../store/registration-store.js';
import type { CallEmitted } from '../call/call.types.js';
import { type RegistrationRefresh, RegistrationView, type StreamRegistration } from './registration-view.js';
import { projectionOf, type StreamCall, sameCall } from './stream-call.js';
import { type DemandMessage, type DemandOptions, StreamDemand } from './stream-demand.js';
import type { AccountFilter, FrameSink, StreamDelta, Subscription } from './stream-types.js';

export type { CallStreamEvent, StreamCall } from './stream-call.js';
export {
  type AccountFilter,
  type FrameSink,
  type StreamDelta,
  StreamEventType,
  type Subscription,
} from './stream-types.js';

interface Buffered {
  readonly seq: number;
  readonly accountSid: string;
  readonly frame: string;
}

interface Subscriber {
  readonly accounts: AccountFilter;
  readonly sink: FrameSink;
  /** The seq its initial frames end at: later deltas only. */
  readonly from: number;
}

export interface LiveStreamOptions {
  /** This node's instance id (`StreamCall.node`; other nodes' deltas are told apart by it). */
  readonly node: string;
  /**
   * Hands this node's deltas to the other nodes (JSON text, see `applyRemote`), one message per
   * flush window; absent on a node that shares nothing.
   */
  readonly relay?: (message: string) => void;
  /** Deltas kept for resume. */
  readonly capacity?: number;
  /** Longest a delta waits to be sent with the others of its window (ms). */
  readonly flushMs?: number;
  /** The figures sent in snapshots and `metrics` frames, for the subscriber's scope. */
  readonly metrics: (accounts: AccountFilter) => object;
  readonly now?: () => number;
  /**
   * Call deltas only while a node of the cluster has a subscriber (needs `relay`, which carries
   * the nodes' demand too); without it, every delta is numbered, kept and relayed.
   */
  readonly onDemand?: DemandOptions;
}

const DEFAULT_CAPACITY = 10_000;
const DEFAULT_FLUSH_MS = 5;

/** Recently ended sids remembered, so an event arriving after `call.ended` cannot revive a call. */
const ENDED_MEMORY = 4096;

export class LiveStream {
  private readonly live = new Map<string, StreamCall>();
  private readonly ended = new Set<string>();
  private readonly registrations: RegistrationView;
  private readonly ring: (Buffered | undefined)[];
  private readonly subscribers = new Set<Subscriber>();
  private readonly now: () => number;
  private seq = 0;
  /** Deltas of the current window, numbered and serialised, not yet sent. */
  private pending: Buffered[] = [];
  /** This node's own deltas of the window (their frames), and its silent refreshes, to relay. */
  private relayFrames: string[] = [];
  private relayRefreshes: RegistrationRefresh[] = [];
  private flushTimer: NodeJS.Timeout | null = null;
  /** How this node's relay messages begin. */
  private readonly ownPrefix: string;
  private readonly demand: StreamDemand | null;
  /** `publishing` as of the last change of the demand. */
  private wasPublishing: boolean;

  constructor(private readonly options: LiveStreamOptions) {
    this.ring = new Array(options.capacity ?? DEFAULT_CAPACITY);
    this.now = options.now ?? Date.now;
    this.ownPrefix = `{"node":${JSON.stringify(options.node)},`;
    // Every node times the bindings it knows of: an expiry is shown by each, never relayed.
    this.registrations = new RegistrationView((e) => this.publish(e), this.now);
    const relay = options.relay;
    this.demand =
      options.onDemand && relay
        ? new StreamDemand(options.node, relay, () => this.demandChanged(), options.onDemand, this.now)
        : null;
    this.wasPublishing = this.publishing;
  }

  /** Whether call deltas are numbered, kept and relayed now. */
  get publishing(): boolean {
    return this.demand === null || this.demand.watched;
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
    const sid = e.call.origin.sid;
    if (this.ended.has(sid)) return;
    const previous = this.live.get(sid);
    if (e.type === 'call.ended') {
      this.forget(sid);
      if (!this.publishing) return;
      const call = projectionOf(this.options.node, e, previous);
      const { status, cause, sipStatus, duration } = e;
      this.local({ type: 'call.ended', at: e.at, call, status, cause, sipStatus, duration });
      return;
    }
    if (e.call.endedAt !== null) return;
    const call = projectionOf(this.options.node, e, previous);
    if (previous && sameCall(previous, call)) return;
    if (!this.publishing) {
      // Kept current for the snapshot of a subscriber to come; nobody is shown the change.
      this.live.set(sid, call);
      return;
    }
    // A call restored from another node's snapshot is new to this node's subscribers too.
    this.local({ type: previous ? 'call.updated' : 'call.created', at: e.at, call });
  };

  /** The registrar observer: this node's binding changes. */
  readonly observeRegistration = (change: RegistrationChange): void => {
    const { events, refreshes } = this.registrations.change(this.options.node, change);
    for (const e of events) this.local(e);
    if (refreshes.length && this.options.relay) {
      this.relayRefreshes.push(...refreshes);
      this.schedule();
    }
  };

  /**
   * Deltas of another node (the JSON `relay` produced there): numbered in this node's sequence
   * like local ones. Own messages coming back, and anything malformed, are ignored.
   */
  applyRemote(message: string): void {
    // Pub/sub hands a node its own messages too: known by their first bytes, not parsed.
    if (message.startsWith(this.ownPrefix)) return;
    let parsed: { node?: unknown; deltas?: unknown; refreshes?: unknown; sync?: unknown };
    try {
      parsed = JSON.parse(message);
    } catch {
      return;
    }
    if (typeof parsed !== 'object' || parsed === null || parsed.node === this.options.node) return;
    if (this.demand && typeof parsed.node === 'string') this.remoteDemand(parsed as DemandMessage);
    if (Array.isArray(parsed.sync)) for (const c of parsed.sync) this.remoteSync(parsed.node, c);
    if (Array.isArray(parsed.deltas)) for (const d of parsed.deltas) this.remoteDelta(d);
    if (Array.isArray(parsed.refreshes))
      for (const r of parsed.refreshes as RegistrationRefresh[])
        if (typeof r?.aor === 'string' && typeof r.contact === 'string' && typeof r.expiresAt === 'number')
          this.registrations.refresh(r);
  }

  /** Another node's announcement: one that starts watching is sent this node's live calls. */
  private remoteDemand(m: DemandMessage): void {
    const change = this.demand?.remote(m);
    if (change === 'joined') {
      // After the deltas already numbered, so the other node applies them first.
      this.flush();
      const own = [...this.live.values()].filter((c) => c.node === this.options.node);
      this.options.relay?.(`${this.ownPrefix}"sync":${JSON.stringify(own)}}`);
    }
    if (change !== 'none') this.demandChanged();
  }

  /** One of another node's live calls, as it stands: a delta if it is new or changed here. */
  private remoteSync(node: unknown, raw: unknown): void {
    if (this.demand && !this.demand.interested) return;
    const call = raw as StreamCall | null;
    if (typeof call?.sid !== 'string' || call.node !== node || this.ended.has(call.sid)) return;
    const previous = this.live.get(call.sid);
    if (previous && sameCall(previous, call)) return;
    this.live.set(call.sid, call);
    this.publish({ type: previous ? 'call.updated' : 'call.created', at: this.now(), call });
  }

  /** This node's subscribers changed: the demand hears their count and its effect follows. */
  private subscribersChanged(): void {
    this.demand?.subscribers(this.subscribers.size);
    this.demandChanged();
  }

  /**
   * Follows a change of the demand: a node that stops publishing leaves a hole in its sequence
   * (nothing is numbered meanwhile, so a client resuming across it must get a snapshot), and one
   * with no subscriber of its own forgets the other nodes' calls, which are no longer kept current
   * for it (they come again, by `sync`, when it has one).
   */
  private demandChanged(): void {
    const demand = this.demand;
    if (!demand) return;
    const now = this.publishing;
    if (this.wasPublishing && !now) {
      this.flush();
      this.seq++;
      this.ring[this.seq % this.ring.length] = undefined;
    }
    this.wasPublishing = now;
    if (!demand.interested)
      for (const [sid, c] of this.live) if (c.node !== this.options.node) this.live.delete(sid);
  }

  private remoteDelta(raw: unknown): void {
    if (typeof raw !== 'object' || raw === null) return;
    // The sender's seq means nothing here.
    const { seq: _seq, ...delta } = raw as StreamDelta & { seq?: unknown };
    if (delta.type === 'registration.changed') {
      if (typeof delta.registration?.aor !== 'string' || typeof delta.registration.contact !== 'string')
        return;
      this.registrations.applyRemote(delta);
      this.publish(delta);
      return;
    }
    if (typeof delta.call?.sid !== 'string') return;
    // An uninterested node drops other nodes' calls (see demandChanged).
    if (this.demand && !this.demand.interested) return;
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
    const subscriber: Subscriber = { accounts, sink, from: this.seq };
    this.subscribers.add(subscriber);
    this.subscribersChanged();
    return {
      initial,
      resumed: replay !== null,
      unsubscribe: () => {
        this.subscribers.delete(subscriber);
        this.subscribersChanged();
      },
    };
  }

  /** Sends every subscriber its figures (the `metrics` frame: not replayed, stale figures are no use). */
  publishMetrics(): void {
    // After the deltas they include.
    this.flush();
    const at = this.now();
    const frameOf = (accounts: AccountFilter) =>
      JSON.stringify({ type: 'metrics', seq: this.seq, at, metrics: this.figures(accounts) });
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

  /** A snapshot frame of the live calls and registrations (of the given accounts) at the current seq. */
  snapshot(accounts: AccountFilter): string {
    const calls = [...this.live.values()].filter((c) => !accounts || accounts.has(c.accountSid));
    const registrations: StreamRegistration[] = this.registrations.list(accounts);
    return JSON.stringify({
      type: 'snapshot',
      seq: this.seq,
      at: this.now(),
      calls,
      registrations,
      metrics: this.figures(accounts),
    });
  }

  /** Sends the deltas of the window now (and relays this node's). */
  flush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    const batch = this.pending;
    this.pending = [];
    if (batch.length) this.deliver(batch);
    if (this.options.relay && (this.relayFrames.length || this.relayRefreshes.length)) {
      const node = JSON.stringify(this.options.node);
      const refreshes = JSON.stringify(this.relayRefreshes);
      this.options.relay(
        `{"node":${node},"deltas":[${this.relayFrames.join(',')}],"refreshes":${refreshes}}`,
      );
    }
    this.relayFrames = [];
    this.relayRefreshes = [];
  }

  /** Stops the timers (pending deltas are sent first). */
  close(): void {
    this.flush();
    this.registrations.close();
    this.demand?.close();
  }

  private figures(accounts: AccountFilter): object {
    return {
      ...this.options.metrics(accounts),
      RegisteredUsers: this.registrations.countRegistered(accounts),
    };
  }

  private deliver(batch: readonly Buffered[]): void {
    const textOf = (frames: readonly Buffered[]) =>
      frames.length === 1 ? (frames[0] as Buffered).frame : `[${frames.map((b) => b.frame).join(',')}]`;
    const first = (batch[0] as Buffered).seq;
    let all: string | undefined;
    for (const s of [...this.subscribers]) {
      // A subscriber is told only what it can see, and what came after its initial frames.
      const seen =
        !s.accounts && s.from < first
          ? batch
          : batch.filter((b) => b.seq > s.from && (!s.accounts || s.accounts.has(b.accountSid)));
      if (seen.length === 0) continue;
      if (seen === batch) {
        all ??= textOf(batch);
        s.sink(all);
      } else s.sink(textOf(seen));
    }
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
      if (!accounts || accounts.has(b.accountSid)) frames.push(b.frame);
    }
    return frames;
  }

  /** A delta of this node: to its subscribers and to the other nodes. */
  private local(event: StreamDelta): void {
    if (event.type === 'call.created' || event.type === 'call.updated')
      this.live.set(event.call.sid, event.call);
    const frame = this.publish(event);
    if (this.options.relay) this.relayFrames.push(frame);
  }

  private forget(sid: string): void {
    this.ended.add(sid);
    if (this.ended.size > ENDED_MEMORY) this.ended.delete(this.ended.values().next().value as string);
    this.live.delete(sid);
  }

  /** Numbers and serialises a delta, keeps it for resume and queues it for the window. */
  private publish(event: StreamDelta): string {
    const seq = ++this.seq;
    // `type` first, then `seq`, then the rest in order (`type` assigned again keeps its place).
    const frame = JSON.stringify(Object.assign({ type: event.type, seq }, event));
    const accountSid =
      event.type === 'registration.changed' ? event.registration.accountSid : event.call.accountSid;
    const buffered = { seq, accountSid, frame };
    this.ring[seq % this.ring.length] = buffered;
    this.pending.push(buffered);
    this.schedule();
    return frame;
  }

  private schedule(): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => this.flush(), this.options.flushMs ?? DEFAULT_FLUSH_MS);
    this.flushTimer.unref();
  }
}
