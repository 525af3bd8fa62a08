/**
 * Accounts: the REST layer reads and changes accounts through this service.
 *
 * An account is a Postgres row; its status follows the spec's table, which account.machine.ts
 * decides as a pure function (there is no live actor per account and nothing of an account is kept
 * in Redis: docs/decisions.md, "Accounts are rows with a status machine"). The service composes the
 * parts: rows cached on this node (account-records.ts), parameter checks (account-validation.ts),
 * status changes and their cascade (account-cascade.ts), organizations and migration
 * (organizations.ts) and Basic authentication (authenticator.ts).
 */
import { AppError } from '../../errors.js';
import { newSid, SidPrefix } from '../../ids.js';
import type { Logger } from '../../logger.js';
import { hashPassword, newAuthToken } from '../../security/credentials.js';
import { PasswordVerifier } from '../../security/password-verifier.js';
import {
  type Account,
  type AccountChangeBus,
  type AccountPatch,
  AccountStatus,
  type AccountStore,
  type Organization,
  Role,
} from '../../store/account-store.js';
import type { AuthThrottleStore } from '../../store/auth-throttle.js';
import { applyTransition } from './account.machine.js';
import { AccountCascade, type ClosedListener } from './account-cascade.js';
import { AccountRecords } from './account-records.js';
import {
  parseEmailAddress,
  parseRole,
  parseSettableStatus,
  validateFriendlyName,
  validatePassword,
} from './account-validation.js';
import { AUTH_DEFAULTS, Authenticator, type AuthenticatorOptions } from './authenticator.js';
import { type MigratedListener, Organizations } from './organizations.js';

export type { ClosedListener } from './account-cascade.js';
export { FRIENDLY_NAME_MAX, PASSWORD_MAX, PASSWORD_MIN } from './account-validation.js';
export type { MigratedListener } from './organizations.js';

export interface CreateAccountInput {
  emailAddress?: string | undefined;
  password?: string | undefined;
  role?: string | undefined;
  friendlyName?: string | undefined;
  status?: string | undefined;
  organizationSid?: string | undefined;
}

export interface UpdateAccountInput {
  friendlyName?: string | undefined;
  status?: string | undefined;
  password?: string | undefined;
  role?: string | undefined;
}

export class AccountService {
  private readonly records: AccountRecords;
  private readonly cascade: AccountCascade;
  private readonly organizations: Organizations;
  private readonly authenticator: Authenticator;
  private superAdminSid: string | null = null;

  constructor(
    private readonly deps: {
      store: AccountStore;
      bus: AccountChangeBus | null;
      logger: Logger;
      now?: () => number;
      /** Password verification and failure throttling; defaults keep tests and tools simple. */
      auth?: {
        verifier?: PasswordVerifier;
        throttle?: AuthThrottleStore | null;
        options?: AuthenticatorOptions;
      };
    },
  ) {
    const now = () => this.now();
    this.records = new AccountRecords(deps.store, { bus: deps.bus, logger: deps.logger, now });
    this.cascade = new AccountCascade(this.records, deps.logger);
    this.organizations = new Organizations(this.records, now);
    this.authenticator = new Authenticator({
      resolve: (user) => this.records.resolve(user),
      verifier: deps.auth?.verifier ?? new PasswordVerifier({ concurrency: 2, queue: 32 }),
      throttle: deps.auth?.throttle ?? null,
      options: deps.auth?.options ?? AUTH_DEFAULTS,
      ...(deps.now ? { now: deps.now } : {}),
    });
  }

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  async start(): Promise<void> {
    await this.records.start();
  }

  /** Nothing to stop (no live actors, no timers); kept so the composition root closes every service alike. */
  stop(): void {}

  onClosed(listener: ClosedListener): void {
    this.cascade.onClosed(listener);
  }

  onMigrated(listener: MigratedListener): void {
    this.organizations.onMigrated(listener);
  }

  // ---------------------------------------------------------------- bootstrap

  /**
   * On an empty database: the default organization and the Super Admin account from ADMIN_EMAIL /
   * ADMIN_PASSWORD. Without a password the account stays `uninitialized` with a random password that
   * is returned once (main logs it) until it sets its own.
   */
  async bootstrap(opts: {
    email: string;
    password: string | undefined;
    defaultDomain: string;
  }): Promise<{ created: boolean; generatedPassword?: string; organization: Organization; admin: Account }> {
    const org = await this.organizations.ensure(opts.defaultDomain);
    const existing = await this.deps.store.findSuperAdmin();
    if (existing) {
      this.superAdminSid = existing.sid;
      return { created: false, organization: org, admin: existing };
    }
    const password = opts.password ?? newAuthToken();
    const generated = opts.password === undefined ? password : undefined;
    const at = new Date(this.now());
    const admin: Account = {
      sid: newSid(SidPrefix.Account),
      parentSid: null,
      organizationSid: org.sid,
      emailAddress: opts.email.toLowerCase(),
      friendlyName: opts.email.toLowerCase(),
      type: 'Full',
      status: opts.password === undefined ? AccountStatus.Uninitialized : AccountStatus.Active,
      suspendedBy: null,
      role: Role.Administrator,
      isSuperAdmin: true,
      authToken: newAuthToken(),
      passwordHash: await hashPassword(password),
      dateCreated: at,
      dateUpdated: at,
    };
    try {
      await this.deps.store.insert(admin);
    } catch (e) {
      // Another node bootstrapped first.
      const raced = await this.deps.store.findSuperAdmin();
      if (!raced) throw e;
      this.superAdminSid = raced.sid;
      return { created: false, organization: org, admin: raced };
    }
    this.superAdminSid = admin.sid;
    return generated === undefined
      ? { created: true, organization: org, admin }
      : { created: true, organization: org, admin, generatedPassword: generated };
  }

  // ---------------------------------------------------------------- reads

  get(sid: string): Promise<Account | null> {
    return this.records.get(sid);
  }

  getByEmail(email: string): Promise<Account | null> {
    return this.records.getByEmail(email);
  }

  /** An account by sid, or by (URL-decoded) email address as the spec allows in paths. */
  resolve(sidOrEmail: string): Promise<Account | null> {
    return this.records.resolve(sidOrEmail);
  }

  getOrganization(sidOrDomain: string): Promise<Organization | null> {
    return this.organizations.get(sidOrDomain);
  }

  /** Whether `target` is `ancestor` or lies in its sub-account tree. */
  isSelfOrDescendant(target: Account, ancestorSid: string): Promise<boolean> {
    return this.records.isSelfOrDescendant(target, ancestorSid);
  }

  /**
   * Authorization scope (spec §Authentication 4): an account acts on itself; an Administrator also on
   * its descendants; the Super Admin on every account.
   */
  async inScope(caller: Account, target: Account): Promise<boolean> {
    if (caller.sid === target.sid || caller.isSuperAdmin) return true;
    if (caller.role !== Role.Administrator) return false;
    return this.records.isSelfOrDescendant(target, caller.sid);
  }

  listSubAccounts(caller: Account): Promise<Account[]> {
    return this.records.descendants(caller.sid);
  }

  // ---------------------------------------------------------------- authentication

  /**
   * HTTP Basic credentials → account, or null. `user` is an account sid or an email address (already
   * URL-decoded); `secret` is the AuthToken or the account's password (both accepted, as Restcomm);
   * `source` is the client address the failure throttle counts against. Throws 429 AppErrors
   * while throttled (see authenticator.ts).
   */
  authenticate(user: string, secret: string, source = 'unknown'): Promise<Account | null> {
    return this.authenticator.authenticate(user, secret, source);
  }

  // ---------------------------------------------------------------- commands

  async create(caller: Account, input: CreateAccountInput): Promise<Account> {
    if (caller.role !== Role.Administrator) {
      throw new AppError('Forbidden', `Role ${caller.role} may not create sub-accounts`);
    }
    const email = parseEmailAddress(input.emailAddress);
    if (input.password === undefined) throw new AppError('MissingParameter', 'Password is required');
    validatePassword(input.password);
    const role = input.role === undefined ? caller.role : parseRole(input.role);
    const friendlyName = input.friendlyName ?? email;
    validateFriendlyName(friendlyName);
    const status = input.status === undefined ? AccountStatus.Active : parseSettableStatus(input.status);
    const organizationSid = await this.organizations.placementFor(caller, input.organizationSid);

    const at = new Date(this.now());
    const sid = newSid(SidPrefix.Account);
    return this.records.insert({
      sid,
      parentSid: caller.sid,
      organizationSid,
      emailAddress: email,
      friendlyName,
      type: 'Full',
      status,
      suspendedBy: status === AccountStatus.Suspended ? sid : null,
      role,
      isSuperAdmin: false,
      authToken: newAuthToken(),
      passwordHash: await hashPassword(input.password),
      dateCreated: at,
      dateUpdated: at,
    });
  }

  /**
   * FriendlyName, Password (→ new AuthToken; activates an uninitialized account), Role and Status
   * (cascading to the sub-account tree). Status and Role are changed by an ancestor only.
   */
  async update(caller: Account, target: Account, input: UpdateAccountInput): Promise<Account> {
    if (!applyTransition(target, { type: 'account.modify' }).allowed) {
      throw new AppError('ClosedAccount', `Account ${target.sid} is closed and cannot be modified`);
    }
    const isSelf = caller.sid === target.sid;
    const patch: { -readonly [K in keyof AccountPatch]: AccountPatch[K] } = {};
    if (input.friendlyName !== undefined) {
      validateFriendlyName(input.friendlyName);
      patch.friendlyName = input.friendlyName;
    }
    if (input.role !== undefined) {
      if (isSelf) throw new AppError('Forbidden', 'An account cannot change its own Role');
      patch.role = parseRole(input.role);
    }
    if (input.password !== undefined) {
      validatePassword(input.password);
      patch.passwordHash = await hashPassword(input.password);
      patch.authToken = newAuthToken();
    }
    let status: AccountStatus | undefined;
    if (input.status !== undefined) {
      status = parseSettableStatus(input.status);
      if (isSelf) throw new AppError('Forbidden', 'An account cannot change its own Status');
    }

    // Validated for the whole tree before anything is written; written only if no row moved meanwhile.
    const change = await this.cascade.plan(target, { passwordSet: input.password !== undefined, status });
    patch.status = change.own.status;
    patch.suspendedBy = change.own.suspendedBy;
    const rows = await this.records.update([
      { sid: target.sid, patch, expect: { status: target.status, suspendedBy: target.suspendedBy } },
      ...change.descendants,
    ]);
    const updated = rows.find((r) => r.sid === target.sid);
    if (!updated) throw new AppError('NotFound', `Account ${target.sid} not found`);
    await this.cascade.release(change.released);
    return updated;
  }

  /**
   * Moves a top-level account (a child of the Super Admin) and its whole tree to another organization.
   * Status codes as the spec's migration table.
   */
  migrate(caller: Account, targetSid: string, organization: string | undefined): Promise<Account> {
    return this.organizations.migrate(caller, targetSid, organization);
  }

  createOrganization(caller: Account, domainName: string | undefined): Promise<Organization> {
    return this.organizations.create(caller, domainName);
  }

  listOrganizations(): Promise<Organization[]> {
    return this.organizations.list();
  }

  get superAdmin(): string | null {
    return this.superAdminSid;
  }

  /** Evicts an account from this node; the next use reloads the record. */
  forget(sid: string): void {
    this.records.forget(sid);
  }
}
