/** Group commit for the Postgres stores: fewer, larger writes when busy. */
/**
 * Group commit: requests that arrive while a batch is being written wait and go together in the
 * next one (at most `inFlight` batches at a time, each of at most `max` items). An idle store
 * writes at once; a busy one makes fewer, larger writes instead of queueing on the pool.
 */
export class GroupCommit<T, R> {
  #pending: Array<{ item: T; resolve: (r: R) => void; reject: (e: unknown) => void }> = [];
  #running = 0;

  constructor(
    private readonly write: (items: T[]) => Promise<R[]>,
    private readonly inFlight = 2,
    private readonly max = 500,
  ) {}

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#pending.push({ item, resolve, reject });
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#running < this.inFlight && this.#pending.length > 0) {
      const batch = this.#pending.splice(0, this.max);
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
          this.#pump();
        });
    }
  }
}
