/**
 * The one start/stop order of the service. Each composition step that opens something registers what
 * closes it right after it succeeds; stopping runs those closers in reverse (last started, first
 * stopped), so SMS drains before the HTTP server closes and Postgres is disposed last. A start-up that
 * fails part-way closes what it had opened before the error reaches the caller.
 */
import type { Logger } from '../logger.js';

/** Undoes one start-up step. */
export type Closer = () => Promise<unknown> | unknown;

export class Lifecycle {
  readonly #closers: Closer[] = [];
  #closed = false;

  constructor(private readonly logger: Logger) {}

  /** Registers the closer of a step that has just started. */
  onClose(closer: Closer): void {
    this.#closers.push(closer);
  }

  /** Runs `start`; if it throws, closes whatever it had started, then rethrows. */
  async start<T>(start: () => Promise<T>): Promise<T> {
    try {
      return await start();
    } catch (e) {
      await this.#runClosers();
      throw e;
    }
  }

  /** Stops everything in reverse start order; a failing closer is logged and the rest still run. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#runClosers();
  }

  async #runClosers(): Promise<void> {
    while (this.#closers.length) {
      const c = this.#closers.pop() as Closer;
      try {
        await c();
      } catch (e) {
        this.logger.warn({ err: e }, 'error during shutdown');
      }
    }
  }
}
