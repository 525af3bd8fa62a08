/**
 * Per-message promise chains: the jobs of one message run in the order they were added, different
 * messages independently. The SMS service keeps one for store writes (a status change must not
 * overtake the one before it) and one for status callbacks (sent before delivered), separately so
 * a slow webhook delays no write.
 */
export class SidChains {
  readonly #chains = new Map<string, Promise<unknown>>();
  readonly #onError: (err: unknown, sid: string) => void;

  /** `onError` gets a job's failure: the chain goes on with the next job. */
  constructor(onError: (err: unknown, sid: string) => void) {
    this.#onError = onError;
  }

  /** Runs `job` after every job already added for `sid`. Never rejects. */
  add(sid: string, job: () => Promise<void>): void {
    const next = (this.#chains.get(sid) ?? Promise.resolve())
      .then(job)
      .catch((err) => this.#onError(err, sid));
    this.#chains.set(sid, next);
    void next.then(() => {
      if (this.#chains.get(sid) === next) this.#chains.delete(sid);
    });
  }

  /** Settles when every job added so far for `sid` has; never rejects. */
  tail(sid: string): Promise<unknown> {
    return this.#chains.get(sid) ?? Promise.resolve();
  }

  /** Messages with jobs still running or waiting. */
  get size(): number {
    return this.#chains.size;
  }

  /** Settles when the jobs added so far have (jobs they add are not waited for). */
  settled(): Promise<unknown> {
    return Promise.allSettled([...this.#chains.values()]);
  }

  /** Settles when no job is left, including jobs added while waiting. */
  async drain(): Promise<void> {
    while (this.#chains.size > 0) await this.settled();
  }
}
