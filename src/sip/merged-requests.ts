/**
 * Merged requests (RFC 3261 §8.2.2.2): an out-of-dialog INVITE or MESSAGE that reaches us twice by
 * different paths has the same From tag, Call-ID and CSeq but another branch; only the first may
 * create a call or a message, the others get 482 Loop Detected. Remembered for Timer B, capped so
 * that a flood cannot grow the table.
 * No timer per request (expiring-entries.ts).
 */
import { ExpiringEntries } from './expiring-entries.js';
import { mergeKey } from './leg-parts.js';
import { detached, type SipRequest } from './message.js';
import type { SipStack } from './stack.js';
import { SipTimers } from './timers.js';

/** Out-of-dialog requests remembered at most (about Timer B × the request rate). */
const MAX_RECENT_REQUESTS = 100_000;

export class MergedRequests {
  /** Merge key → the branch of the request that came first, for Timer B. */
  private readonly recent: ExpiringEntries<string>;

  constructor(
    private readonly stack: SipStack,
    now: () => number = Date.now,
  ) {
    this.recent = new ExpiringEntries(SipTimers.TIMER_B, now, MAX_RECENT_REQUESTS);
  }

  /** False, after answering 482, when `rq` (no To-tag) is a merged copy of one in progress. */
  admit(rq: SipRequest): boolean {
    const key = mergeKey(rq);
    const branch = String(rq.headers.via[0]?.params.branch ?? '');
    const known = this.recent.get(key);
    if (known !== undefined) {
      if (known === branch) return true;
      this.stack.respond(rq, 482);
      return false;
    }
    // Detached: the key and branch are slices of the request's text, and are kept for Timer B.
    this.recent.set(detached(key), detached(branch));
    return true;
  }

  /**
   * Forgets an admitted request that was answered without effect (challenged with 401/407): some
   * clients resend it with credentials under the same CSeq, which is not a merge.
   */
  release(rq: SipRequest): void {
    const key = mergeKey(rq);
    if (this.recent.get(key) === String(rq.headers.via[0]?.params.branch ?? '')) this.recent.delete(key);
  }
}
