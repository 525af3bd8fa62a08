/**
 * What stands in for an INVITE server transaction in its Accepted state (RFC 6026 §7.1) once its
 * 2xx is acknowledged: from then on the transaction has nothing to send (the ACK ended the 2xx
 * retransmissions) and only absorbs retransmissions of the INVITE until Timer L ends it. Kept here
 * as one key and one number per INVITE instead of the `sip` package's transaction (its 2xx, its
 * closures and its timer) for the rest of those 32 s: at hundreds of calls a second those were
 * most of what a call left behind in the old generation.
 */
import { ExpiringEntries } from './expiring-entries.js';
import { detached, type SipRequest } from './message.js';

export class AcceptedInvites {
  private readonly entries: ExpiringEntries<true>;

  constructor(lifetimeMs: number, now: () => number = Date.now) {
    this.entries = new ExpiringEntries(lifetimeMs, now);
  }

  /** The key of an INVITE's transaction (Call-ID and top Via branch), or null without a branch. */
  static keyOf(rq: SipRequest): string | null {
    const branch = rq.headers.via[0]?.params.branch;
    return typeof branch === 'string' && branch ? `${rq.headers['call-id']}|${branch}` : null;
  }

  /** Absorbs the INVITE's retransmissions for the lifetime from now; false when it has no key. */
  add(invite: SipRequest): boolean {
    const key = AcceptedInvites.keyOf(invite);
    if (key === null) return false;
    // Detached: the branch and Call-ID are slices of the request's text, and the key is kept 32 s.
    this.entries.set(detached(key), true);
    return true;
  }

  /** Whether `rq` is a retransmission of an accepted INVITE (to be dropped). */
  absorbs(rq: SipRequest): boolean {
    if (this.entries.size === 0) return false;
    const key = AcceptedInvites.keyOf(rq);
    return key !== null && this.entries.get(key) === true;
  }

  get size(): number {
    return this.entries.size;
  }
}
