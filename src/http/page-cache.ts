/**
 * Rendered list pages, kept per node and served again while the store says nothing they show has
 * changed: each page is stored with the version its rows were read at (CallStore.listVersion, kept
 * by Postgres in the writing transactions, so writes of other nodes and of other programs count),
 * and a request first reads the current version — one primary-key read — and sends the kept bytes
 * when it is the same. Never stale: a write committed before the version read is seen by it.
 *
 * A page whose account changes between every two reads (a busy account's first page) would pay the
 * version read for nothing each time; a key whose previous page was replaced without serving once
 * skips the check for COLD_KEY_MS and reads the rows directly.
 *
 * Bounded by entries and bytes (least recently used dropped first).
 */

/** How long a key whose pages keep changing goes straight to the store. */
const COLD_KEY_MS = 1000;

interface Entry {
  readonly version: number;
  readonly body: Buffer;
  hits: number;
  /** Before this instant (epoch ms), requests for the key skip the version check. */
  readonly checkAfter: number;
}

export interface PageCacheLimits {
  readonly entries: number;
  readonly bytes: number;
}

export class PageCache {
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;

  constructor(
    private readonly limits: PageCacheLimits = { entries: 512, bytes: 32 * 1024 * 1024 },
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The kept body for `key` when `currentVersion()` still answers the version it was read at;
   * null when there is none, it changed, or the key is cold (no version read then).
   */
  async lookup(key: string, currentVersion: () => Promise<number>): Promise<Buffer | null> {
    const entry = this.#entries.get(key);
    if (entry === undefined || this.now() < entry.checkAfter) return null;
    if ((await currentVersion()) !== entry.version) return null;
    // Most recently used last (Map keeps insertion order).
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    entry.hits++;
    return entry.body;
  }

  /** Keeps the body of `key` read at `version` (too large a body is not kept). */
  store(key: string, version: number, body: Buffer): void {
    const old = this.#entries.get(key);
    const now = this.now();
    let checkAfter = 0;
    if (old !== undefined) {
      // Concurrent readers of one version store the same page; a slower reader may bring an older
      // one (versions only grow). Neither replaces what is kept.
      if (version <= old.version) return;
      this.#drop(key, old);
      if (now < old.checkAfter) checkAfter = old.checkAfter;
      else if (old.hits === 0) checkAfter = now + COLD_KEY_MS;
    }
    if (body.length > this.limits.bytes / 8) return;
    this.#entries.set(key, { version, body, hits: 0, checkAfter });
    this.#bytes += body.length;
    for (const [k, e] of this.#entries) {
      if (this.#entries.size <= this.limits.entries && this.#bytes <= this.limits.bytes) break;
      this.#drop(k, e);
    }
  }

  get size(): number {
    return this.#entries.size;
  }

  #drop(key: string, entry: Entry): void {
    this.#entries.delete(key);
    this.#bytes -= entry.body.length;
  }
}
