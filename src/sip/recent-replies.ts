/**
 * What stands in for a server transaction for requests the stack answers statelessly (REGISTER):
 * the final answer's bytes, by the request's source and branch, for 8 to 16 s, so a retransmission
 * gets the very same answer (the same nonce and To-tag: a client that compares them sees a
 * retransmission, not a new answer) and a retransmission that arrives while the first copy is
 * still being handled is dropped rather than handled twice. A later retransmission is handled
 * again, which for REGISTER writes the same binding. Two generations, no timer per request.
 * Bounded: a generation that fills up is retired early.
 *
 * The answers' bytes live outside the JavaScript heap, in one buffer per generation (recycled when
 * the generation retires): at thousands of REGISTERs a second, two answers of half a kilobyte each
 * kept for seconds were most of what survived into the old generation, and most of the collector's
 * marking and compacting. Only the keys and a number per key stay on the heap.
 */

import type { Flow } from './flow.js';
import { detached } from './message.js';

const GENERATION_MS = 8_000;
const MAX_PER_GENERATION = 50_000;
/** Bytes of answers one generation holds: MAX_PER_GENERATION answers of 640 bytes on average. */
const GENERATION_BYTES = MAX_PER_GENERATION * 640;
/** An answer this long is kept as a string instead (rare: a 200 listing many contacts). */
const MAX_IN_BUFFER = 16 * 1024;
/** Marks a request being handled: its retransmissions are dropped until the answer is known. */
const PENDING = -1;
/** Each answer in a buffer is its length (4 bytes) and then its bytes (latin1). */
const LENGTH_BYTES = 4;

const NEW = { kind: 'new' } as const;
const PENDING_VERDICT = { kind: 'pending' } as const;

/** An answer's place in its generation's buffer (offset), PENDING, or the answer itself. */
type Kept = number | string;

class Generation {
  readonly entries = new Map<string, Kept>();
  used = 0;
  /** Made on the first answer the generation keeps (a node that takes no REGISTER has none). */
  constructor(public bytes: Buffer | null) {}

  /** Room for `size` more bytes (a buffer not made yet has all of it). */
  fits(size: number): boolean {
    return this.used + size <= GENERATION_BYTES;
  }

  /** Keeps `text` in the buffer; its bytes. */
  keep(key: string, text: string): Buffer {
    this.bytes ??= Buffer.allocUnsafeSlow(GENERATION_BYTES);
    const at = this.used;
    this.bytes.writeUInt32LE(text.length, at);
    this.bytes.write(text, at + LENGTH_BYTES, 'latin1');
    this.used = at + LENGTH_BYTES + text.length;
    this.entries.set(key, at);
    return this.bytes.subarray(at + LENGTH_BYTES, this.used);
  }

  text(kept: Kept): string {
    if (typeof kept === 'string') return kept;
    const bytes = this.bytes as Buffer;
    const length = bytes.readUInt32LE(kept);
    return bytes.toString('latin1', kept + LENGTH_BYTES, kept + LENGTH_BYTES + length);
  }
}

export class RecentReplies {
  private current = new Generation(null);
  private previous = new Generation(null);
  private rotatedAt: number;

  constructor(private readonly now: () => number = Date.now) {
    this.rotatedAt = now();
  }

  /**
   * The key of a request from `flow` (a retransmission has the same branch, Call-ID and CSeq), or
   * null when it has no branch to tell retransmissions by.
   */
  static keyFor(
    flow: Flow,
    branch: string | undefined,
    callId: string,
    seq: number,
    method: string,
  ): string | null {
    // Detached: the branch and Call-ID are slices of the request's text, and the key is kept for seconds.
    return branch
      ? detached(`${flow.protocol}|${flow.address}|${flow.port}|${branch}|${callId}|${seq} ${method}`)
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
    this.rotate(0);
    let generation = this.current;
    let kept = generation.entries.get(key);
    if (kept === undefined) {
      generation = this.previous;
      kept = generation.entries.get(key);
    }
    if (kept === undefined) {
      this.current.entries.set(key, PENDING);
      return NEW;
    }
    return kept === PENDING ? PENDING_VERDICT : { kind: 'answered', text: generation.text(kept) };
  }

  /**
   * Records the final answer sent for `key`. Returns its bytes (latin1) when they were kept in a
   * buffer, for the caller to send as they are; they stay valid for seconds at least (until their
   * generation's buffer is reused), not indefinitely: write them now, do not queue them.
   */
  answered(key: string, text: string): Buffer | null {
    const inBuffer = text.length <= MAX_IN_BUFFER;
    this.rotate(inBuffer ? LENGTH_BYTES + text.length : 0);
    this.previous.entries.delete(key);
    if (inBuffer) return this.current.keep(key, text);
    this.current.entries.set(key, text);
    return null;
  }

  /** Retires the current generation when it is old or full, or lacks `room` bytes of buffer. */
  private rotate(room: number): void {
    const now = this.now();
    const g = this.current;
    if (now - this.rotatedAt < GENERATION_MS && g.entries.size < MAX_PER_GENERATION && g.fits(room)) return;
    // The retiring generation's buffer is reused: nothing refers to its answers any more.
    const recycled = this.previous.bytes;
    this.previous = g;
    this.current = new Generation(recycled);
    this.rotatedAt = now;
  }
}
