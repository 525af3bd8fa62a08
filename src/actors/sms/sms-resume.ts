/**
 * Resume of pending outbound messages (docs/sms.md "Durability, restart, de-duplication"). Every
 * pending message holds a resume lease for the node sending it. At start this node takes back the
 * leases held under its own id (a crash with a fixed INSTANCE_ID) and resumes them; then a periodic
 * sweep renews its leases and claims pending messages whose lease expired (a node that died), so
 * each pending message is resumed by one node at a time.
 */
import type { Logger } from '../../logger.js';
import type { SmsStore } from '../../store/sms-store.js';
import { inputOf, type SmsActorSpawner } from './sms-actors.js';

/** Pending messages claimed per sweep at most. */
const CLAIM_BATCH = 1000;

export interface SmsResumeDeps {
  readonly store: Pick<SmsStore, 'claimPending' | 'nextForeignLeaseEnd' | 'renewClaims' | 'releaseClaims'>;
  readonly actors: SmsActorSpawner;
  /** This node's id (INSTANCE_ID): owner of resume leases. */
  readonly node: string;
  /** Only messages to send over a carrier link are pending; without one there is nothing to resume. */
  readonly hasLink: boolean;
  /** True once the service is closing: no sweep runs or is scheduled any more. */
  readonly closing: () => boolean;
  /** Resume lease on a pending message (LEASE_MS). */
  readonly leaseMs: number;
  /** Sweep interval (RESUME_INTERVAL_MS, resolved). */
  readonly intervalMs: number;
  readonly logger: Logger;
}

/** Resumes pending messages at start and in a periodic sweep. */
export class SmsResume {
  readonly #deps: SmsResumeDeps;
  /** Sids resumed after a submit was attempted: the carrier may have them, so they are flagged possible duplicates. */
  readonly #resumedSending = new Set<string>();
  #sweep: NodeJS.Timeout | null = null;

  constructor(deps: SmsResumeDeps) {
    this.#deps = deps;
  }

  /** Resumes what this node left pending, then sweeps periodically. */
  async start(): Promise<void> {
    // Nothing is live yet: leases still held under this node's id (a crash with a fixed INSTANCE_ID) are ours to resume.
    await this.#deps.store.releaseClaims(this.#deps.node);
    await this.#resumePending();
    await this.#scheduleSweep();
  }

  /** Stops the sweep (shutdown). */
  stop(): void {
    if (this.#sweep) clearTimeout(this.#sweep);
  }

  /** True when the message was resumed after its submit_sm may have reached the carrier. */
  isPossibleDuplicate(sid: string): boolean {
    return this.#resumedSending.has(sid);
  }

  /** The message's actor left memory. */
  forget(sid: string): void {
    this.#resumedSending.delete(sid);
  }

  /**
   * Next sweep: after the interval, or just after the earliest lease another node holds ends (it
   * died: its messages are resumed then, not an interval later).
   */
  async #scheduleSweep(): Promise<void> {
    if (this.#deps.closing()) return;
    let delay = this.#deps.intervalMs;
    if (this.#deps.hasLink) {
      const next = await this.#deps.store.nextForeignLeaseEnd(this.#deps.node).catch(() => null);
      if (next) delay = Math.max(10, Math.min(delay, next.getTime() - Date.now() + 20));
    }
    if (this.#deps.closing()) return;
    this.#sweep = setTimeout(() => {
      this.#sweep = null;
      this.#resumePending()
        .catch((err) => this.#deps.logger.error({ err }, 'SMS resume sweep failed'))
        .then(() => this.#scheduleSweep())
        .catch((err) => this.#deps.logger.error({ err }, 'SMS resume sweep not scheduled'));
    }, delay);
    this.#sweep.unref();
  }

  async #resumePending(): Promise<void> {
    if (this.#deps.closing() || !this.#deps.hasLink) return;
    await this.#deps.store.renewClaims(this.#deps.node, this.#deps.leaseMs);
    const rows = await this.#deps.store.claimPending(this.#deps.node, this.#deps.leaseMs, CLAIM_BATCH);
    let resumed = 0;
    for (const m of rows) {
      if (this.#deps.actors.get(m.sid)) continue; // our lease lapsed but the actor is live: keep it
      // Only a message whose submit_sm may have reached the carrier can be there twice (also one
      // requeued as `queued` at a shutdown whose in-flight submit_sm got no answer in time).
      if (m.submitAttempted) this.#resumedSending.add(m.sid);
      this.#deps.actors.spawn(inputOf(m));
      resumed++;
    }
    if (resumed) this.#deps.logger.info({ resumed }, 'pending SMS resumed');
  }
}
