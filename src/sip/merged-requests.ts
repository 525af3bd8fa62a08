/**
 * Merged requests (RFC 3261 §8.2.2.2): an out-of-dialog INVITE or MESSAGE that reaches us twice by
 * different paths has the same From tag, Call-ID and CSeq but another branch; only the first may
 * create a call or a message, the others get 482 Loop Detected. Remembered for Timer B, capped so
 * that a flood cannot grow the table.
 *
 * No timer per request: every entry lives as long, so the table in insertion order is in expiry
 * order, and the expired ones are dropped from its front as requests come.
 */
import { mergeKey } from './leg-parts.js';
import { detached, type SipRequest } from './message.js';
import type { SipStack } from './stack.js';
import { SipTimers } from './timers.js';

/** Out-of-dialog requests remembered at most (about Timer B × the request rate). */
const MAX_RECENT_REQUESTS = 100_000;

interface Recent {
  /** The branch of the request that came first. */
  readonly branch: string;
  /** When it is forgotten (ms). */
  readonly until: number;
}

export class MergedRequests {
  /** Merge key → the request that came first; insertion order is expiry order. */
  private readonly recent = new Map<string, Recent>();

  constructor(
    private readonly stack: SipStack,
    private readonly now: () => number = Date.now,
  ) {}

  /** False, after answering 482, when `rq` (no To-tag) is a merged copy of one in progress. */
  admit(rq: SipRequest): boolean {
    const now = this.now();
    this.expire(now);
    const key = mergeKey(rq);
    const branch = String(rq.headers.via[0]?.params.branch ?? '');
    const known = this.recent.get(key);
    if (known !== undefined) {
      if (known.branch === branch) return true;
      this.stack.respond(rq, 482);
      return false;
    }
    // Detached: the key and branch are slices of the request's text, and are kept for Timer B.
    if (this.recent.size < MAX_RECENT_REQUESTS)
      this.recent.set(detached(key), { branch: detached(branch), until: now + SipTimers.TIMER_B });
    return true;
  }

  /**
   * Forgets an admitted request that was answered without effect (challenged with 401/407): some
   * clients resend it with credentials under the same CSeq, which is not a merge.
   */
  release(rq: SipRequest): void {
    const key = mergeKey(rq);
    if (this.recent.get(key)?.branch === String(rq.headers.via[0]?.params.branch ?? ''))
      this.recent.delete(key);
  }

  private expire(now: number): void {
    for (const [key, r] of this.recent) {
      if (r.until > now) return;
      this.recent.delete(key);
    }
  }
}
