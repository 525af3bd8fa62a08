/**
 * What stands in for a server transaction for requests the stack answers statelessly (REGISTER):
 * the final answer's bytes, by the request's source and branch, for 8 to 16 s, so a retransmission
 * gets the very same answer (the same nonce and To-tag: a client that compares them sees a
 * retransmission, not a new answer) and a retransmission that arrives while the first copy is
 * still being handled is dropped rather than handled twice. A later retransmission is handled
 * again, which for REGISTER writes the same binding. Two generations of plain strings: nothing per
 * request for the collector to trace, no timer per request. Bounded: a generation that fills up
 * is retired early.
 */
import type { SipRequest } from './message.js';
import type { Flow } from './transport.js';

const GENERATION_MS = 8_000;
const MAX_PER_GENERATION = 50_000;
/** Marks a request being handled: its retransmissions are dropped until the answer is known. */
const PENDING = '';

export class RecentReplies {
  private current = new Map<string, string>();
  private previous = new Map<string, string>();
  private rotatedAt: number;

  constructor(private readonly now: () => number = Date.now) {
    this.rotatedAt = now();
  }

  /**
   * The key of a request from `flow` (a retransmission has the same branch, Call-ID and CSeq), or
   * null when it has no branch to tell retransmissions by.
   */
  static keyOf(rq: SipRequest, flow: Flow): string | null {
    const branch = rq.headers.via[0]?.params.branch;
    return typeof branch === 'string' && branch
      ? `${flow.protocol}|${flow.address}|${flow.port}|${branch}|${rq.headers['call-id']}|${rq.headers.cseq.seq} ${rq.headers.cseq.method}`
      : null;
  }

  /**
   * Starts handling `key`: `new` for a request not seen lately (now marked pending), `pending`
   * for a retransmission of one still being handled, or the answer already sent.
   */
  begin(
    key: string,
  ):
    | { readonly kind: 'new' }
    | { readonly kind: 'pending' }
    | { readonly kind: 'answered'; readonly text: string } {
    this.rotate();
    const text = this.current.get(key) ?? this.previous.get(key);
    if (text === undefined) {
      this.current.set(key, PENDING);
      return { kind: 'new' };
    }
    return text === PENDING ? { kind: 'pending' } : { kind: 'answered', text };
  }

  /** Records the final answer sent for `key`. */
  answered(key: string, text: string): void {
    this.rotate();
    this.previous.delete(key);
    this.current.set(key, text);
  }

  private rotate(): void {
    const now = this.now();
    if (now - this.rotatedAt < GENERATION_MS && this.current.size < MAX_PER_GENERATION) return;
    this.previous = this.current;
    this.current = new Map();
    this.rotatedAt = now;
  }
}
