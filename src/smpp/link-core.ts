/**
 * State the SMSC connections of one link share: the queue of segments to send (every bind pulls
 * from it, so the windows of all binds stay full), receipt matching by message id, listeners.
 */
import type { Logger } from '../logger.js';
import type { SmppError } from './errors.js';
import type { MoHandler, SmppEvent } from './port.js';
import { normaliseMessageId } from './receipt.js';
import { SmppLimits } from './timers.js';

/** Tunables beyond SMPP_URL (tests shorten them). */
export interface SmppLinkOptions {
  readonly logger: Logger;
  readonly throttleMinMs?: number;
  readonly throttleMaxMs?: number;
  readonly reassemblyTimeoutMs?: number;
  readonly reassemblyMaxEntries?: number;
  readonly earlyReceiptTtlMs?: number;
  readonly earlyReceiptMax?: number;
  readonly unbindTimeoutMs?: number;
}

/** The options with every default filled in. */
export type LinkCoreOptions = Required<Omit<SmppLinkOptions, 'logger'>> & { logger: Logger };

/** What the shared queue needs of a connection. */
export interface Pumpable {
  pump(): void;
}

/** One segment's submit_sm waiting for (or holding) a window slot. */
export interface SegmentJob {
  /** submit_sm fields except TON/NPI and default registered_delivery, which each bind fills in. */
  readonly fields: Record<string, unknown>;
  readonly registeredDelivery: number | undefined;
  throttled: number;
  notBefore: number;
  /** Sent at least once on a bind that was lost before the resp came back. */
  duplicate: boolean;
  /** The message's `beforeSend`, shared by its segments: runs once, awaited before the first write. */
  readonly gate: SendGate | null;
  resolve(id: string): void;
  reject(err: SmppError): void;
}

/** Runs a message's `beforeSend` once; every segment waits for the same run. */
export class SendGate {
  #run: Promise<void> | null = null;
  #done = false;
  constructor(private readonly hook: () => Promise<void>) {}
  get done(): boolean {
    return this.#done;
  }
  open(): Promise<void> {
    this.#run ??= Promise.resolve()
      .then(this.hook)
      .then(() => {
        this.#done = true;
      });
    return this.#run;
  }
}

/**
 * The FIFO of segments ready to send: O(1) push and shift (an array's `shift` moves every element, and
 * the queue holds every message offered while the windows are full), and segments put back at the
 * head (in-flight ones of a lost bind, due throttled ones) in their order.
 */
export class SegmentQueue {
  #items: Array<SegmentJob | undefined> = [];
  #head = 0;

  get length(): number {
    return this.#items.length - this.#head;
  }

  push(job: SegmentJob): void {
    this.#items.push(job);
  }

  shift(): SegmentJob | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const job = this.#items[this.#head];
    this.#items[this.#head++] = undefined;
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#head = 0;
    } else if (this.#head >= 1024 && this.#head * 2 >= this.#items.length) {
      // Amortised O(1): the live half is copied once the dead prefix is as long as it.
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return job;
  }

  /** Puts `jobs` back at the head, in their order. */
  unshift(jobs: readonly SegmentJob[]): void {
    if (jobs.length <= this.#head) {
      this.#head -= jobs.length;
      jobs.forEach((job, i) => {
        this.#items[this.#head + i] = job;
      });
    } else {
      this.#items = [...jobs, ...this.#items.slice(this.#head)];
      this.#head = 0;
    }
  }

  /** Empties the queue; returns what it held, in order. */
  drain(): SegmentJob[] {
    const out: SegmentJob[] = [];
    for (let i = this.#head; i < this.#items.length; i++) {
      const job = this.#items[i];
      if (job) out.push(job);
    }
    this.#items = [];
    this.#head = 0;
    return out;
  }
}

/** Bounded insertion-ordered set/map helper. */
export class BoundedMap<V> extends Map<string, V> {
  constructor(readonly max: number) {
    super();
  }
  override set(key: string, value: V): this {
    if (!this.has(key) && this.size >= this.max) {
      const first = this.keys().next();
      if (!first.done) this.delete(first.value);
    }
    return super.set(key, value);
  }
}

/** Shared state of the link: the queue and receipt matching, used by every connection. */
export class LinkCore {
  /** Segments ready to send, FIFO (re-queued in-flight segments go back to the head). */
  readonly queue = new SegmentQueue();
  /** Throttled segments, sorted by notBefore; moved back to the head of `queue` when due. */
  readonly delayed: SegmentJob[] = [];
  readonly listeners = new Set<(e: SmppEvent) => void>();
  /** normalised message id → raw id, for ids seen in submit_sm_resp. */
  readonly submitted = new BoundedMap<string>(200_000);
  /** receipts received before their submit_sm_resp. */
  readonly parked = new BoundedMap<{ at: number; emit: (matched: boolean, rawId: string) => void }>(
    SmppLimits.EARLY_RECEIPT_MAX,
  );
  readonly seenReceipts = new BoundedMap<true>(200_000);
  readonly connections: Pumpable[] = [];
  moHandler: MoHandler | null = null;
  closed = false;
  ref = Math.floor(Math.random() * 256);

  constructor(readonly opts: LinkCoreOptions) {
    this.parked = new BoundedMap(opts.earlyReceiptMax);
  }

  emit(e: SmppEvent): void {
    for (const l of this.listeners) {
      try {
        l(e);
      } catch (err) {
        this.opts.logger.error({ err, event: e.type }, 'smpp listener threw');
      }
    }
  }

  /** Park a throttled segment until `job.notBefore` (binary insertion keeps `delayed` sorted). */
  delay(job: SegmentJob): void {
    let lo = 0;
    let hi = this.delayed.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.delayed[mid]?.notBefore ?? 0) <= job.notBefore) lo = mid + 1;
      else hi = mid;
    }
    this.delayed.splice(lo, 0, job);
  }

  /** A throttled segment (ESME_RTHROTTLED, ESME_RMSGQFUL) goes again after an exponential backoff. */
  retryLater(job: SegmentJob): number {
    job.throttled++;
    const { throttleMinMs, throttleMaxMs } = this.opts;
    const delay = Math.min(throttleMaxMs, throttleMinMs * 2 ** Math.min(20, job.throttled - 1));
    job.notBefore = Date.now() + delay;
    this.delay(job);
    return delay;
  }

  /** Move due throttled segments to the head of the ready queue; returns the next due time or null. */
  releaseDue(now: number): number | null {
    let n = 0;
    while (n < this.delayed.length && (this.delayed[n]?.notBefore ?? 0) <= now) n++;
    if (n > 0) this.queue.unshift(this.delayed.splice(0, n));
    return this.delayed[0]?.notBefore ?? null;
  }

  pumpAll(): void {
    for (const c of this.connections) c.pump();
  }

  /** A submit_sm_resp gave us an id: remember it and release a parked receipt. */
  noteSubmitted(rawId: string): void {
    const key = normaliseMessageId(rawId);
    this.submitted.set(key, rawId);
    const p = this.parked.get(key);
    if (p) {
      this.parked.delete(key);
      p.emit(true, rawId);
    }
  }

  sweepParked(now: number): void {
    for (const [key, p] of this.parked) {
      if (p.at + this.opts.earlyReceiptTtlMs > now) break;
      this.parked.delete(key);
      p.emit(false, key);
    }
  }
}
