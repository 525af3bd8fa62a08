/**
 * Entries that all live equally long, so that the insertion order of their Map is their expiry
 * order: the expired ones are dropped from its front whenever it is used. No timer per entry — at
 * hundreds of calls a second a timer and its closure per INVITE were what a call left behind.
 */
export class ExpiringEntries<V> {
  private readonly entries = new Map<string, { readonly value: V; readonly until: number }>();

  constructor(
    private readonly lifetimeMs: number,
    private readonly now: () => number = Date.now,
    /** Entries kept at most: `set` refuses more (a flood cannot grow the table). */
    private readonly max = Number.POSITIVE_INFINITY,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string): V | undefined {
    if (this.entries.size === 0) return undefined;
    this.expire();
    return this.entries.get(key)?.value;
  }

  /** Keeps `key` for the lifetime from now (moved to the back if it was there); false when full. */
  set(key: string, value: V): boolean {
    this.expire();
    this.entries.delete(key);
    if (this.entries.size >= this.max) return false;
    this.entries.set(key, { value, until: this.now() + this.lifetimeMs });
    return true;
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  private expire(): void {
    const now = this.now();
    for (const [key, e] of this.entries) {
      if (e.until > now) return;
      this.entries.delete(key);
    }
  }
}
