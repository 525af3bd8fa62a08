/**
 * Bounded reassembly buffer for inbound concatenated messages (3GPP TS 23.040 §9.2.3.24.1).
 * Entries are keyed by source, destination and reference; an incomplete entry is evicted after
 * `timeoutMs` or when `maxEntries` is reached (oldest first), and reported through `onExpired`
 * so the caller can log a missing segment (spec code 30009).
 */
export interface SegmentIn {
  readonly source: string;
  readonly destination: string;
  readonly ref: number;
  readonly total: number;
  readonly seq: number;
  readonly text: string;
}

interface Entry {
  readonly parts: Map<number, string>;
  readonly total: number;
  readonly createdAt: number;
}

export interface ReassemblyOptions {
  readonly timeoutMs: number;
  readonly maxEntries: number;
  readonly now?: () => number;
  readonly onExpired?: (key: string, received: number, total: number) => void;
}

export class ReassemblyBuffer {
  readonly #entries = new Map<string, Entry>();
  readonly #opts: ReassemblyOptions;
  readonly #now: () => number;

  constructor(opts: ReassemblyOptions) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Add one segment; returns the full text once every part is present, else null. */
  add(seg: SegmentIn): string | null {
    return this.addUndoable(seg)?.text ?? null;
  }

  /**
   * Like `add`; the completed message also comes with `undo`, which puts the other parts back (the
   * caller could not take the message and refused this segment, so the sender will repeat it).
   */
  addUndoable(seg: SegmentIn): { text: string; undo(): void } | null {
    this.sweep();
    if (seg.total < 1 || seg.seq < 1 || seg.seq > seg.total) return null;
    if (seg.total === 1) return { text: seg.text, undo: () => {} };
    const key = `${seg.source}|${seg.destination}|${seg.ref}|${seg.total}`;
    let entry = this.#entries.get(key);
    if (!entry) {
      while (this.#entries.size >= this.#opts.maxEntries) {
        const oldest = this.#entries.keys().next();
        if (oldest.done) break;
        const e = this.#entries.get(oldest.value);
        this.#entries.delete(oldest.value);
        if (e) this.#opts.onExpired?.(oldest.value, e.parts.size, e.total);
      }
      entry = { parts: new Map(), total: seg.total, createdAt: this.#now() };
      this.#entries.set(key, entry);
    }
    entry.parts.set(seg.seq, seg.text);
    if (entry.parts.size < entry.total) return null;
    this.#entries.delete(key);
    let text = '';
    for (let i = 1; i <= entry.total; i++) text += entry.parts.get(i) ?? '';
    const full = entry;
    return {
      text,
      undo: () => {
        if (this.#entries.has(key)) return;
        full.parts.delete(seg.seq);
        this.#entries.set(key, { parts: full.parts, total: full.total, createdAt: this.#now() });
      },
    };
  }

  /** Drop entries older than the timeout. */
  sweep(): void {
    const limit = this.#now() - this.#opts.timeoutMs;
    for (const [key, e] of this.#entries) {
      if (e.createdAt > limit) break; // insertion order = age order
      this.#entries.delete(key);
      this.#opts.onExpired?.(key, e.parts.size, e.total);
    }
  }

  clear(): void {
    this.#entries.clear();
  }
}
