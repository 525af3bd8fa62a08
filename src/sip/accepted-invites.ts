/**
 * What stands in for an INVITE server transaction in its Accepted state (RFC 6026 §7.1) once its
 * 2xx is acknowledged: from then on the transaction has nothing to send (the ACK ended the 2xx
 * retransmissions) and only absorbs retransmissions of the INVITE until Timer L ends it. Kept here
 * as one key and one number per INVITE instead of the `sip` package's transaction (its 2xx, its
 * closures and its timer) for the rest of those 32 s: at hundreds of calls a second those were
 * most of what a call left behind in the old generation.
 *
 * No timer per entry: the entries expire in the order they were added (one lifetime for all), so
 * the oldest are dropped as new ones come, and on lookups.
 */
import { detached, type SipRequest } from './message.js';

export class AcceptedInvites {
  /** Key → when the entry expires (ms); insertion order is expiry order. */
  private readonly entries = new Map<string, number>();

  constructor(
    private readonly lifetimeMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The key of an INVITE's transaction (Call-ID and top Via branch), or null without a branch. */
  static keyOf(rq: SipRequest): string | null {
    const branch = rq.headers.via[0]?.params.branch;
    // Detached: the branch and Call-ID are slices of the request's text, and the key is kept 32 s.
    return typeof branch === 'string' && branch ? detached(`${rq.headers['call-id']}|${branch}`) : null;
  }

  /** Absorbs the INVITE's retransmissions for `lifetimeMs` from now; false when it has no key. */
  add(invite: SipRequest): boolean {
    const key = AcceptedInvites.keyOf(invite);
    if (key === null) return false;
    const now = this.now();
    this.expire(now);
    this.entries.delete(key);
    this.entries.set(key, now + this.lifetimeMs);
    return true;
  }

  /** Whether `rq` is a retransmission of an accepted INVITE (to be dropped). */
  absorbs(rq: SipRequest): boolean {
    if (this.entries.size === 0) return false;
    this.expire(this.now());
    const key = AcceptedInvites.keyOf(rq);
    return key !== null && this.entries.has(key);
  }

  get size(): number {
    return this.entries.size;
  }

  private expire(now: number): void {
    for (const [key, until] of this.entries) {
      if (until > now) return;
      this.entries.delete(key);
    }
  }
}
