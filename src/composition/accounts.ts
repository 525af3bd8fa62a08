/**
 * Composition of the account service (Postgres store, Redis bus and auth throttle, password verifier)
 * and the Super Admin bootstrap.
 */
import { AccountService } from '../actors/account/account-service.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { PasswordVerifier } from '../security/password-verifier.js';
import { PgAccountStore } from '../store/postgres/account-repository.js';
import { RedisAuthThrottle } from '../store/redis/auth-throttle.js';
import { RedisChangeBus } from '../store/redis/change-bus.js';
import type { Lifecycle } from './lifecycle.js';
import type { Connections } from './stores.js';

export interface StartedAccounts {
  readonly accounts: AccountService;
  readonly boot: Awaited<ReturnType<AccountService['bootstrap']>>;
}

/** Starts the account service and makes sure a Super Admin exists. */
export async function startAccounts(
  config: Config,
  logger: Logger,
  { db, redis, sub, keys }: Connections,
  lifecycle: Lifecycle,
): Promise<StartedAccounts> {
  const accounts = new AccountService({
    store: new PgAccountStore(db),
    bus: new RedisChangeBus(redis, sub, keys.accountChannel),
    logger: logger.child({ component: 'accounts' }),
    auth: {
      verifier: new PasswordVerifier({
        concurrency: config.auth.verifyConcurrency,
        queue: config.auth.verifyQueue,
      }),
      throttle: new RedisAuthThrottle(redis, keys),
      options: config.auth,
    },
  });
  await accounts.start();
  lifecycle.onClose(() => accounts.stop());
  const boot = await accounts.bootstrap({
    email: config.admin.email,
    password: config.admin.password,
    defaultDomain: config.organization.defaultDomain,
  });
  if (boot.generatedPassword) {
    // Logged once, on first start only: the account stays uninitialized until it sets its own password.
    logger.warn(
      { adminSid: boot.admin.sid, email: boot.admin.emailAddress, oneTimePassword: boot.generatedPassword },
      'ADMIN_PASSWORD not set: Super Admin created uninitialized with this one-time password; set a new Password to activate it',
    );
  }
  return { accounts, boot };
}
