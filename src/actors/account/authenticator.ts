/**
 * HTTP Basic credentials → account (spec §Authentication 1), hardened against guessing:
 *
 * - An AuthToken (128 random bits, compared in constant time) is checked first and never throttled:
 *   guessing one is hopeless, and API clients keep working while their address is under attack.
 * - Password attempts are refused with 429 + Retry-After while the identity or the client address
 *   has too many recent failures (counters in a shared store, so every node sees them).
 * - Passwords are verified by a PasswordVerifier with bounded concurrency (429 + Retry-After: 1 when
 *   saturated: the client should slow down, the server is fine); unknown users cost one verification against a dummy hash, like known ones.
 * - A verified password is remembered briefly under an HMAC of (account, secret) with a per-process
 *   key, so repeated logins stay fast and the cache never holds anything a dump could reverse cheaply.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../../errors.js';
import { sha256Hex } from '../../security/credentials.js';
import { type PasswordVerifier, VerifierSaturatedError } from '../../security/password-verifier.js';
import type { Account } from '../../store/account-store.js';
import type {
  AuthThrottleStore,
  ThrottleLimits,
  ThrottleState,
  ThrottleSubject,
} from '../../store/auth-throttle.js';

export interface AuthenticatorOptions extends ThrottleLimits {
  /** How long a verified password is remembered (ms); 0 disables the cache. */
  readonly cacheMs: number;
  /**
   * How long a refused (429) attempt is held before it is answered (ms). A client that ignores
   * Retry-After and retries at once then sends at most one attempt per connection per tarpit,
   * which keeps a flood of guesses from crowding out other requests.
   */
  readonly tarpitMs: number;
}

/** Defaults (AUTH_* variables in src/config.ts, documented in docs/decisions.md). */
export const AUTH_DEFAULTS: AuthenticatorOptions = {
  identityFailures: 10,
  sourceFailures: 50,
  windowMs: 300_000,
  cacheMs: 30_000,
  tarpitMs: 1000,
};

const CACHE_MAX = 10_000;
/** Longest user name looked up: an email address (RFC 5321 caps a path at 256) or a sid. */
const USER_MAX = 256;

export class Authenticator {
  private readonly verified = new Map<string, number>();
  private readonly blockedUntil = new Map<string, number>();
  private readonly cacheKey = randomBytes(32);
  /**
   * Each cached account record's AuthToken as bytes, made once per record: a request then costs
   * one constant-time comparison with the presented secret's bytes. A changed token comes with a new
   * record (the change bus evicts the old one on every node), so an entry never outlives the token
   * it was made from.
   */
  private readonly tokenBytes = new WeakMap<Account, Buffer>();

  constructor(
    private readonly deps: {
      resolve: (user: string) => Promise<Account | null>;
      verifier: PasswordVerifier;
      throttle: AuthThrottleStore | null;
      options: AuthenticatorOptions;
      now?: () => number;
    },
  ) {}

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  /**
   * The account `user` (sid or email) authenticates as with `secret`, or null for wrong
   * credentials. Throws AppError TooManyRequests (429) with Retry-After while throttled or while
   * verifications are saturated.
   */
  async authenticate(user: string, secret: string, source: string): Promise<Account | null> {
    const plausible = user.length <= USER_MAX && !user.includes('\u0000');
    const account = plausible ? await this.deps.resolve(user) : null;
    if (account && this.isAuthToken(account, secret)) return account;

    const { throttle, options } = this.deps;
    // Keyed by the account when one matches, so the sid and the email share one counter.
    const subject = { identity: sha256Hex(account ? account.sid : user.toLowerCase()), source };
    const known = this.locallyBlocked(subject);
    if (known > 0) throw await this.refuse(known);
    if (throttle) {
      const blocked = this.remember(subject, await throttle.blockedFor(subject, options));
      if (blocked > 0) throw await this.refuse(blocked);
    }

    const key = account ? this.cacheKeyOf(account, secret) : null;
    if (key !== null) {
      const until = this.verified.get(key);
      if (until !== undefined && until > this.now()) {
        await throttle?.clearIdentity(subject.identity);
        return account;
      }
    }
    let ok: boolean;
    try {
      ok = await this.deps.verifier.verify(secret, account?.passwordHash ?? null);
    } catch (e) {
      if (e instanceof VerifierSaturatedError) {
        await sleep(Math.min(options.tarpitMs, 1000));
        throw new AppError('TooManyRequests', 'Too many logins are being checked; try again shortly', {
          headers: { 'Retry-After': '1' },
        });
      }
      throw e;
    }
    if (ok && account && key !== null) {
      if (options.cacheMs > 0) {
        if (this.verified.size >= CACHE_MAX) this.verified.clear();
        this.verified.set(key, this.now() + options.cacheMs);
      }
      await throttle?.clearIdentity(subject.identity);
      return account;
    }
    if (throttle) this.remember(subject, await throttle.recordFailure(subject, options));
    return null;
  }

  /** Forgets remembered verifications (an account changed its password or was closed). */
  forgetAll(): void {
    this.verified.clear();
  }

  /** The 429 for a blocked subject, after the tarpit delay. */
  private async refuse(blockedMs: number): Promise<AppError> {
    await sleep(this.deps.options.tarpitMs);
    return tooMany(Math.max(0, blockedMs - this.deps.options.tarpitMs));
  }

  /**
   * Blocks already seen in the shared store are remembered here until they end, so a flood of
   * attempts from a blocked address costs a map lookup each, not a store round trip.
   */
  private locallyBlocked(subject: ThrottleSubject): number {
    const now = this.now();
    const until = Math.max(
      this.blockedUntil.get(`id:${subject.identity}`) ?? 0,
      this.blockedUntil.get(`ip:${subject.source}`) ?? 0,
    );
    return until > now ? until - now : 0;
  }

  /** Records the store's answer locally; returns how long the subject stays blocked. */
  private remember(subject: ThrottleSubject, state: ThrottleState): number {
    const now = this.now();
    if (this.blockedUntil.size >= CACHE_MAX) this.blockedUntil.clear();
    if (state.identityMs > 0) this.blockedUntil.set(`id:${subject.identity}`, now + state.identityMs);
    if (state.sourceMs > 0) this.blockedUntil.set(`ip:${subject.source}`, now + state.sourceMs);
    return Math.max(state.identityMs, state.sourceMs);
  }

  /**
   * Constant-time over the token's bytes. Only the length can show in the timing, and every token
   * has the same one (32 hex digits), so it tells nothing about any account's token.
   */
  private isAuthToken(account: Account, secret: string): boolean {
    let expected = this.tokenBytes.get(account);
    if (expected === undefined) {
      expected = Buffer.from(account.authToken, 'utf8');
      this.tokenBytes.set(account, expected);
    }
    if (Buffer.byteLength(secret, 'utf8') !== expected.length) return false;
    return timingSafeEqual(Buffer.from(secret, 'utf8'), expected);
  }

  private cacheKeyOf(account: Account, secret: string): string {
    // The stored hash's tail is in the key, so a password change invalidates old entries.
    return createHmac('sha256', this.cacheKey)
      .update(`${account.sid}\u0000${account.passwordHash.slice(-24)}\u0000${secret}`)
      .digest('base64');
  }
}

function tooMany(blockedMs: number): AppError {
  return new AppError('TooManyRequests', 'Too many failed logins; try again later', {
    headers: { 'Retry-After': String(Math.max(1, Math.ceil(blockedMs / 1000))) },
  });
}
