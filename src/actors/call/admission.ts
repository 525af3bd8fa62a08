/**
 * Outbound call admission: excess REST calls wait in a per-account FIFO queue
 * instead of failing, as Twilio queues calls over an account's CPS. The queue is bounded; a full
 * queue is refused (the REST layer answers 429). Slots are leases in Redis, renewed while the call
 * lives, so limits hold across nodes and a crashed node's slots expire.
 */
import { AppError } from '../../errors.js';
import type { CallAdmissionStore } from '../../store/call-admission.js';

export interface AdmissionLimits {
  readonly maxConcurrent: number;
  readonly perSecond: number;
  /** Calls that may wait per account on this node before new ones are refused. */
  readonly maxQueued: number;
}

interface Waiter {
  readonly callSid: string;
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
  readonly signal: AbortSignal | undefined;
}

export const LEASE_MS = 60_000;

export class CallAdmission {
  private readonly queues = new Map<string, Waiter[]>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly pumping = new Set<string>();
  private stopped = false;

  constructor(
    private readonly store: CallAdmissionStore,
    private readonly limits: AdmissionLimits,
  ) {}

  /** Number of calls of the account waiting on this node. */
  queued(accountSid: string): number {
    return this.queues.get(accountSid)?.length ?? 0;
  }

  /**
   * Resolves when the call may start (FIFO per account). Rejects with AppError TooManyRequests when
   * the account's queue is full, or with the signal's reason when aborted (call canceled while queued).
   */
  admit(accountSid: string, callSid: string, signal?: AbortSignal): Promise<void> {
    const queue = this.queues.get(accountSid) ?? [];
    if (queue.length >= this.limits.maxQueued) {
      return Promise.reject(
        new AppError('TooManyRequests', `Too many queued calls for account ${accountSid}`, {
          headers: { 'Retry-After': '1' },
        }),
      );
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { callSid, resolve, reject, signal };
      queue.push(waiter);
      this.queues.set(accountSid, queue);
      signal?.addEventListener(
        'abort',
        () => {
          const q = this.queues.get(accountSid);
          const i = q?.indexOf(waiter) ?? -1;
          if (q && i >= 0) {
            q.splice(i, 1);
            reject(signal.reason);
          }
        },
        { once: true },
      );
      if (queue.length === 1) void this.pump(accountSid);
    });
  }

  async release(accountSid: string, callSid: string): Promise<void> {
    await this.store.release(accountSid, callSid);
    if (this.queued(accountSid) > 0) this.schedule(accountSid, 0);
  }

  async renew(accountSid: string, callSid: string): Promise<void> {
    await this.store.renew(accountSid, callSid, LEASE_MS);
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    for (const q of this.queues.values()) {
      for (const w of q) w.reject(new AppError('Unavailable', 'Service is shutting down'));
    }
    this.queues.clear();
  }

  private schedule(accountSid: string, delayMs: number): void {
    if (this.stopped || this.timers.has(accountSid)) return;
    const t = setTimeout(() => {
      this.timers.delete(accountSid);
      void this.pump(accountSid);
    }, delayMs);
    this.timers.set(accountSid, t);
  }

  /** Admits waiters at the head of the account's queue while the limits allow. */
  private async pump(accountSid: string): Promise<void> {
    if (this.pumping.has(accountSid)) return;
    this.pumping.add(accountSid);
    try {
      await this.pumpQueue(accountSid);
    } finally {
      this.pumping.delete(accountSid);
    }
  }

  private async pumpQueue(accountSid: string): Promise<void> {
    const queue = this.queues.get(accountSid);
    while (!this.stopped && queue && queue.length > 0) {
      const head = queue[0] as Waiter;
      let result: Awaited<ReturnType<CallAdmissionStore['tryAcquire']>>;
      try {
        result = await this.store.tryAcquire(accountSid, head.callSid, this.limits, LEASE_MS);
      } catch (e) {
        queue.shift();
        head.reject(e);
        continue;
      }
      if (queue[0] !== head) {
        // Aborted while we asked: give the slot back.
        if (result.admitted) await this.store.release(accountSid, head.callSid).catch(() => {});
        continue;
      }
      if (!result.admitted) {
        this.schedule(accountSid, result.retryAfterMs);
        return;
      }
      queue.shift();
      head.resolve();
    }
    if (queue && queue.length === 0) this.queues.delete(accountSid);
  }
}
