/**
 * The reordering stage of the receive jitter buffer: RTP packets are handed on in sequence order
 * (RFC 3550 §5.1: the sequence number is there to restore order). A packet ahead of the expected
 * one is held while at most `maxHeld` packets wait for the gap to fill; beyond that, or when the
 * playout FIFO runs dry (`flush`), the gap is given up as lost. Packets older than what was
 * already handed on (late or duplicate) are dropped and counted.
 */

/** Sequence distance beyond which a jump is a restart of the sender's numbering, not a gap. */
const MAX_JUMP = 100;

export class Reorderer<T> {
  private expected: number | null = null;
  private ssrc: number | null = null;
  private readonly held = new Map<number, T>();
  /** Dropped as late or duplicate. */
  late = 0;

  constructor(
    private readonly deliver: (item: T) => void,
    private readonly maxHeld = 3,
  ) {}

  /** Packets waiting for a gap to fill. */
  get holding(): number {
    return this.held.size;
  }

  push(ssrc: number, seq: number, item: T): void {
    if (ssrc !== this.ssrc) {
      this.flush();
      this.ssrc = ssrc;
      this.expected = null;
    }
    if (this.expected === null) {
      this.pass(seq, item);
      return;
    }
    const ahead = (seq - this.expected) & 0xffff;
    if (ahead === 0) {
      this.pass(seq, item);
      this.drain();
    } else if (ahead < 0x8000) {
      if (ahead > MAX_JUMP) {
        this.flush();
        this.pass(seq, item);
        return;
      }
      if (this.held.has(seq)) {
        this.late++;
        return;
      }
      this.held.set(seq, item);
      if (this.held.size > this.maxHeld) this.skipGap();
    } else {
      this.late++;
    }
  }

  /** Gives up on every gap: hands on everything held, in order. */
  flush(): void {
    while (this.held.size > 0) this.skipGap();
  }

  private pass(seq: number, item: T): void {
    this.deliver(item);
    this.expected = (seq + 1) & 0xffff;
  }

  private drain(): void {
    while (this.expected !== null && this.held.has(this.expected)) {
      const item = this.held.get(this.expected)!;
      this.held.delete(this.expected);
      this.pass(this.expected, item);
    }
  }

  /** Moves past the missing packet(s) to the nearest held one. */
  private skipGap(): void {
    if (this.expected === null) return;
    let nearest = -1;
    let best = Number.POSITIVE_INFINITY;
    for (const seq of this.held.keys()) {
      const d = (seq - this.expected) & 0xffff;
      if (d < best) {
        best = d;
        nearest = seq;
      }
    }
    if (nearest < 0) return;
    this.expected = nearest;
    this.drain();
  }
}
