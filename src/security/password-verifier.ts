/**
 * Password verification with a bounded share of the machine. scrypt runs on libuv's thread pool
 * (4 threads by default), which file reads (recording downloads, the media cache) share: unbounded
 * concurrent verifications would starve them. At most `concurrency` verifications run at once,
 * at most `queue` wait, and the rest are refused at once (VerifierSaturatedError) instead of
 * piling up.
 *
 * Unknown users are verified against a dummy hash of the same cost, so the time an answer takes
 * does not tell whether the user exists.
 */
import { randomBytes } from 'node:crypto';
import { hashPassword, verifyPassword } from './credentials.js';

export class VerifierSaturatedError extends Error {
  override readonly name = 'VerifierSaturatedError';
  constructor() {
    super('too many password verifications are in progress');
  }
}

export interface PasswordVerifierOptions {
  /** Verifications running at once. */
  readonly concurrency: number;
  /** Verifications waiting for a slot; beyond it attempts are refused. */
  readonly queue: number;
}

export class PasswordVerifier {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private dummy: Promise<string> | null = null;

  constructor(private readonly options: PasswordVerifierOptions) {}

  /**
   * Whether `secret` matches `storedHash`; with a null hash (no such user) it runs the same work
   * against a dummy hash and answers false. Rejects with VerifierSaturatedError when the queue is full.
   */
  async verify(secret: string, storedHash: string | null): Promise<boolean> {
    // Both paths await once, so neither answers a tick sooner.
    const hash = await (storedHash ?? this.dummyHash());
    await this.acquire();
    try {
      const ok = await verifyPassword(secret, hash);
      return ok && storedHash !== null;
    } finally {
      this.release();
    }
  }

  /** Verifications running and waiting now (for tests and metrics). */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  private dummyHash(): Promise<string> {
    // Same parameters as real hashes (hashPassword), of a random value nobody knows; made on first
    // use, outside the budget, once per process.
    this.dummy ??= hashPassword(randomBytes(16).toString('hex'));
    return this.dummy;
  }

  private acquire(): Promise<void> {
    if (this.running < this.options.concurrency) {
      this.running++;
      return Promise.resolve();
    }
    if (this.waiting.length >= this.options.queue) return Promise.reject(new VerifierSaturatedError());
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }
}
