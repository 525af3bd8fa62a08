/** Group commit for the Postgres stores: fewer, larger writes when busy. */

/** A request waiting for its batch. */
interface Waiting<T, R> {
  readonly item: T;
  resolve(r: R): void;
  reject(e: unknown): void;
}

/**
 * Group commit: requests that arrive while a batch is being written wait and go together in the
 * next one (at most `inFlight` batches at a time, each of at most `max` items). An idle store
 * writes at once, or, with `lingerMs`, after waiting that long for more requests to join the
 * first (a statement costs the server about the same CPU for one row as for ten: the round trip,
 * not the row, is the cost); a busy one makes fewer, larger writes instead of queueing on the pool.
 *
 * With `keyOf`, a batch holds at most one item per key: a second item for the same row goes in a
 * later batch, because one statement cannot change a row twice (Postgres applies only one of two
 * changes the sub-statements of one statement make to the same row).
 */
export class GroupCommit<T, R> {
  #pending: Waiting<T, R>[] = [];
  #running = 0;
  #linger: NodeJS.Timeout | null = null;

  constructor(
    private readonly write: (items: T[]) => Promise<R[]>,
    private readonly inFlight = 2,
    private readonly max = 500,
    private readonly keyOf?: (item: T) => string,
    private readonly lingerMs = 0,
  ) {}

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#pending.push({ item, resolve, reject });
      if (this.lingerMs <= 0 || this.#pending.length >= this.max) this.#pump();
      else this.#linger ??= setTimeout(() => this.#pump(), this.lingerMs);
    });
  }

  #take(): Waiting<T, R>[] {
    const keyOf = this.keyOf;
    if (!keyOf) return this.#pending.splice(0, this.max);
    const batch: Waiting<T, R>[] = [];
    const rest: Waiting<T, R>[] = [];
    const keys = new Set<string>();
    for (const p of this.#pending) {
      const key = keyOf(p.item);
      if (batch.length < this.max && !keys.has(key)) {
        keys.add(key);
        batch.push(p);
      } else rest.push(p);
    }
    this.#pending = rest;
    return batch;
  }

  #pump(): void {
    if (this.#linger) clearTimeout(this.#linger);
    this.#linger = null;
    while (this.#running < this.inFlight && this.#pending.length > 0) {
      const batch = this.#take();
      this.#running++;
      this.write(batch.map((b) => b.item))
        .then(
          (results) => {
            batch.forEach((b, i) => {
              b.resolve(results[i] as R);
            });
          },
          (err) => {
            for (const b of batch) b.reject(err);
          },
        )
        .finally(() => {
          this.#running--;
          // What queued behind a write has waited for it: written at once.
          this.#pump();
        });
    }
  }
}
