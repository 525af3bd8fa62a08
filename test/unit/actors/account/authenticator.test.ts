import { beforeAll, describe, expect, it } from 'vitest';
import { AUTH_DEFAULTS, Authenticator } from '../../../../src/actors/account/authenticator.js';
import { AppError } from '../../../../src/errors.js';
import { hashPassword } from '../../../../src/security/credentials.js';
import { PasswordVerifier } from '../../../../src/security/password-verifier.js';
import { type Account, AccountStatus, Role } from '../../../../src/store/account-store.js';
import type {
  AuthThrottleStore,
  ThrottleLimits,
  ThrottleState,
  ThrottleSubject,
} from '../../../../src/store/auth-throttle.js';

/** In-memory AuthThrottleStore with the Redis adapter's fixed-window semantics (no expiry needed here). */
class MemoryThrottle implements AuthThrottleStore {
  readonly counts = new Map<string, number>();
  private state(s: ThrottleSubject, l: ThrottleLimits): ThrottleState {
    const id = this.counts.get(`id:${s.identity}`) ?? 0;
    const ip = this.counts.get(`ip:${s.source}`) ?? 0;
    return {
      identityMs: id >= l.identityFailures ? l.windowMs : 0,
      sourceMs: ip >= l.sourceFailures ? l.windowMs : 0,
    };
  }
  async blockedFor(s: ThrottleSubject, l: ThrottleLimits) {
    return this.state(s, l);
  }
  async recordFailure(s: ThrottleSubject, l: ThrottleLimits) {
    for (const k of [`id:${s.identity}`, `ip:${s.source}`]) this.counts.set(k, (this.counts.get(k) ?? 0) + 1);
    return this.state(s, l);
  }
  async clearIdentity(identity: string) {
    this.counts.delete(`id:${identity}`);
  }
}

/** Counts verifications and the hashes they ran against. */
class CountingVerifier extends PasswordVerifier {
  readonly calls: Array<string | null> = [];
  override verify(secret: string, storedHash: string | null) {
    this.calls.push(storedHash);
    return super.verify(secret, storedHash);
  }
}

let account: Account;
beforeAll(async () => {
  const now = new Date();
  account = {
    sid: 'AC00000000000000000000000000000001',
    parentSid: null,
    organizationSid: 'OR00000000000000000000000000000001',
    emailAddress: 'user@example.test',
    friendlyName: 'user',
    type: 'Full',
    status: AccountStatus.Active,
    suspendedBy: null,
    role: Role.Developer,
    isSuperAdmin: false,
    authToken: '0123456789abcdef0123456789abcdef',
    passwordHash: await hashPassword('right-password'),
    dateCreated: now,
    dateUpdated: now,
  };
});

function make(options = { ...AUTH_DEFAULTS, identityFailures: 2, sourceFailures: 5, tarpitMs: 0 }) {
  const verifier = new CountingVerifier({ concurrency: 2, queue: 8 });
  const throttle = new MemoryThrottle();
  const auth = new Authenticator({
    resolve: async (user) => (user === account.sid || user === account.emailAddress ? account : null),
    verifier,
    throttle,
    options,
  });
  return { auth, verifier, throttle };
}

const status = async (p: Promise<unknown>) =>
  p.then(
    (a) => (a ? 200 : 401),
    (e) => (e instanceof AppError ? e.status : 500),
  );

describe('Authenticator', () => {
  it('an unknown user costs one verification, against a dummy hash, like a known one', async () => {
    const { auth, verifier } = make();
    expect(await auth.authenticate('nobody@example.test', 'guess', '10.0.0.1')).toBeNull();
    expect(await auth.authenticate(account.emailAddress, 'guess', '10.0.0.1')).toBeNull();
    expect(verifier.calls).toEqual([null, account.passwordHash]);
  });

  it('blocks an identity after its failures (sid and email share it); the AuthToken still passes', async () => {
    const { auth } = make();
    expect(await status(auth.authenticate(account.emailAddress, 'bad-1', '10.0.0.1'))).toBe(401);
    expect(await status(auth.authenticate(account.sid, 'bad-2', '10.0.0.2'))).toBe(401);
    const blocked = await auth
      .authenticate(account.sid, 'right-password', '10.0.0.3')
      .catch((e: AppError) => e);
    expect(blocked).toBeInstanceOf(AppError);
    expect((blocked as AppError).status).toBe(429);
    expect(Number((blocked as AppError).headers['Retry-After'])).toBeGreaterThan(0);
    expect(await auth.authenticate(account.sid, account.authToken, '10.0.0.3')).toBe(account);
  });

  it('remembers a verified password (no second verification) and clears the identity counter', async () => {
    const { auth, verifier, throttle } = make();
    await auth.authenticate(account.emailAddress, 'bad', '10.0.0.9');
    expect(await auth.authenticate(account.emailAddress, 'right-password', '10.0.0.9')).toBe(account);
    expect(await auth.authenticate(account.emailAddress, 'right-password', '10.0.0.9')).toBe(account);
    expect(verifier.calls).toHaveLength(2);
    expect([...throttle.counts.keys()].some((k) => k.startsWith('id:'))).toBe(false);
  });
});
