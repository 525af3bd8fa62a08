/**
 * Accounts: the REST layer reads and commands account actors through this service.
 *
 * Postgres holds the account record; each account loaded on this node has a root actor whose machine
 * is the spec's status table, and whose snapshot is written to Redis after every change. Records are
 * cached on this node and evicted on change (locally, and on other nodes through the change bus).
 */
import { type Actor, createActor, transition } from 'xstate';
import { AppError } from '../../errors.js';
import { newSid, SidPrefix } from '../../ids.js';
import type { Logger } from '../../logger.js';
import { hashPassword, newAuthToken } from '../../security/credentials.js';
import { PasswordVerifier } from '../../security/password-verifier.js';
import {
  type Account,
  type AccountPatch,
  AccountStatus,
  type AccountStore,
  type Organization,
  Role,
} from '../../store/account-store.js';
import type { AuthThrottleStore } from '../../store/auth-throttle.js';
import type { SnapshotStore } from '../../store/snapshot-store.js';
import { ActorRegistry } from '../runtime.js';
import { type AccountSnapshot, accountMachine, snapshotAt, statusOf } from './account.machine.js';
import type { AccountEvent } from './account.types.js';
import { AUTH_DEFAULTS, Authenticator, type AuthenticatorOptions } from './authenticator.js';

export type AccountActor = Actor<typeof accountMachine>;

import type { AccountChangeBus } from '../../store/account-store.js';

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

const CACHE_TTL_MS = 30_000;
const EMAIL_RE = /^[^\s@]+@[^\s@]+$/;
export const FRIENDLY_NAME_MAX = 64;
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 128;

/** Listeners told when an account is closed (so what it owns — numbers, clients — can be released). */
export type ClosedListener = (accountSid: string) => Promise<void> | void;
/** Listeners told when an account moved to another organization. */
export type MigratedListener = (accountSid: string, organizationSid: string) => Promise<void> | void;

export class AccountService {
  private readonly cache = new Map<string, { account: Account; at: number }>();
  private readonly emailIndex = new Map<string, string>();
  private readonly authenticator: Authenticator;
  private readonly actors = new ActorRegistry<AccountActor>();
  private readonly closedListeners: ClosedListener[] = [];
  private readonly migratedListeners: MigratedListener[] = [];
  private superAdminSid: string | null = null;

  constructor(
    private readonly deps: {
      store: AccountStore;
      snapshots: SnapshotStore;
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
    this.authenticator = new Authenticator({
      resolve: (user) => this.resolve(user),
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
    await this.deps.bus?.subscribe((sid) => this.forget(sid));
  }

  stop(): void {
    this.actors.stopAll();
  }

  onClosed(listener: ClosedListener): void {
    this.closedListeners.push(listener);
  }

  onMigrated(listener: MigratedListener): void {
    this.migratedListeners.push(listener);
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
    let org = await this.deps.store.findOrganization(opts.defaultDomain);
    if (!org) {
      const at = new Date(this.now());
      org = {
        sid: newSid(SidPrefix.Organization),
        domainName: opts.defaultDomain.toLowerCase(),
        status: 'active',
        dateCreated: at,
        dateUpdated: at,
      };
      try {
        await this.deps.store.insertOrganization(org);
      } catch (e) {
        // Another node created it first.
        org = await this.deps.store.findOrganization(opts.defaultDomain);
        if (!org) throw e;
      }
    }
    const existing = await this.deps.store.findSuperAdmin();
    if (existing) {
      this.superAdminSid = existing.sid;
      return { created: false, organization: org, admin: existing };
    }
    const generated = opts.password === undefined ? newAuthToken() : undefined;
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
      passwordHash: await hashPassword(opts.password ?? (generated as string)),
      dateCreated: at,
      dateUpdated: at,
    };
    try {
      await this.deps.store.insert(admin);
    } catch (e) {
      const raced = await this.deps.store.findSuperAdmin();
      if (!raced) throw e;
      this.superAdminSid = raced.sid;
      return { created: false, organization: org, admin: raced };
    }
    this.superAdminSid = admin.sid;
    await this.persistSnapshot(this.actorFor(admin));
    return generated === undefined
      ? { created: true, organization: org, admin }
      : { created: true, organization: org, admin, generatedPassword: generated };
  }

  // ---------------------------------------------------------------- reads

  async get(sid: string): Promise<Account | null> {
    const hit = this.cache.get(sid);
    if (hit && this.now() - hit.at < CACHE_TTL_MS) return hit.account;
    const account = await this.deps.store.findBySid(sid);
    if (account) this.remember(account);
    else this.cache.delete(sid);
    return account;
  }

  async getByEmail(email: string): Promise<Account | null> {
    const sid = this.emailIndex.get(email.toLowerCase());
    if (sid) {
      const a = await this.get(sid);
      if (a && a.emailAddress === email.toLowerCase()) return a;
    }
    const account = await this.deps.store.findByEmail(email);
    if (account) this.remember(account);
    return account;
  }

  /** An account by sid, or by (URL-decoded) email address as the spec allows in paths. */
  async resolve(sidOrEmail: string): Promise<Account | null> {
    return sidOrEmail.includes('@') ? this.getByEmail(sidOrEmail) : this.get(sidOrEmail);
  }

  async getOrganization(sidOrDomain: string): Promise<Organization | null> {
    return this.deps.store.findOrganization(sidOrDomain);
  }

  /** Whether `target` is `ancestor` or lies in its sub-account tree. */
  async isSelfOrDescendant(target: Account, ancestorSid: string): Promise<boolean> {
    let cur: Account | null = target;
    for (let depth = 0; cur && depth < 64; depth++) {
      if (cur.sid === ancestorSid) return true;
      cur = cur.parentSid ? await this.get(cur.parentSid) : null;
    }
    return false;
  }

  /**
   * Authorization scope (spec §Authentication 4): an account acts on itself; an Administrator also on
   * its descendants; the Super Admin on every account.
   */
  async inScope(caller: Account, target: Account): Promise<boolean> {
    if (caller.sid === target.sid || caller.isSuperAdmin) return true;
    if (caller.role !== Role.Administrator) return false;
    return this.isSelfOrDescendant(target, caller.sid);
  }

  async listSubAccounts(caller: Account): Promise<Account[]> {
    const all = await this.deps.store.listDescendants(caller.sid);
    for (const a of all) this.remember(a);
    return all;
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
    const email = input.emailAddress?.trim().toLowerCase();
    if (!email) throw new AppError('MissingParameter', 'EmailAddress is required');
    if (!EMAIL_RE.test(email) || email.length > 254) {
      throw new AppError('InvalidParameter', `EmailAddress "${email}" is not a valid email address`);
    }
    if (input.password === undefined) throw new AppError('MissingParameter', 'Password is required');
    validatePassword(input.password);
    const role = input.role === undefined ? caller.role : parseRole(input.role);
    const friendlyName = input.friendlyName ?? email;
    validateFriendlyName(friendlyName);
    const status = input.status === undefined ? AccountStatus.Active : parseSettableStatus(input.status);

    let organizationSid = caller.organizationSid;
    if (input.organizationSid !== undefined) {
      const org = await this.deps.store.findOrganization(input.organizationSid);
      if (!org) throw new AppError('InvalidParameter', `Unknown organization ${input.organizationSid}`);
      if (org.sid !== caller.organizationSid && !caller.isSuperAdmin) {
        throw new AppError('Forbidden', 'Only the Super Admin may create an account in another organization');
      }
      organizationSid = org.sid;
    }
    const at = new Date(this.now());
    const sid = newSid(SidPrefix.Account);
    const account: Account = {
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
    };
    await this.deps.store.insert(account);
    const stored = (await this.deps.store.findBySid(account.sid)) as Account;
    this.remember(stored);
    await this.persistSnapshot(this.actorFor(stored));
    return stored;
  }

  /**
   * FriendlyName, Password (→ new AuthToken; activates an uninitialized account), Role and Status
   * (cascading to the sub-account tree). Status and Role are changed by an ancestor only.
   */
  async update(caller: Account, target: Account, input: UpdateAccountInput): Promise<Account> {
    const actor = await this.ensureActor(target);
    if (!actor.getSnapshot().can({ type: 'account.modify' })) {
      throw new AppError('ClosedAccount', `Account ${target.sid} is closed and cannot be modified`);
    }
    const isSelf = caller.sid === target.sid;
    const patch: {
      -readonly [K in keyof AccountPatch]: AccountPatch[K];
    } = {};
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

    const patches: Array<{ sid: string; patch: AccountPatch; event?: AccountEvent }> = [];
    const ownEvents: AccountEvent[] = [];
    if (patch.passwordHash && target.status === AccountStatus.Uninitialized) {
      ownEvents.push({ type: 'account.passwordSet' });
    }
    if (status !== undefined && status !== target.status) {
      const cascade = await this.planStatusChange(target, status);
      ownEvents.push(cascade.own);
      patches.push(...cascade.descendants);
    }
    // Validate every transition before writing anything.
    let own = actor.getSnapshot();
    for (const ev of ownEvents) {
      if (!own.can(ev)) {
        throw new AppError(
          'Conflict',
          `Account ${target.sid} cannot go from ${statusOf(own)} with ${ev.type}`,
        );
      }
      own = transition(accountMachine, own, ev)[0];
    }
    patch.status = statusOf(own);
    patch.suspendedBy = own.context.suspendedBy;

    const rows = await this.deps.store
      .updateMany([{ sid: target.sid, patch }, ...patches.map(({ sid, patch }) => ({ sid, patch }))])
      .catch((e) => {
        this.forget(target.sid);
        throw e;
      });
    for (const ev of ownEvents) actor.send(ev);
    await this.afterWrite(
      rows,
      [target.sid, ...patches.map((p) => p.sid)],
      new Map(patches.map((p) => [p.sid, p.event])),
    );
    const updated = rows.find((r) => r.sid === target.sid) as Account;
    if (updated.status === AccountStatus.Closed) {
      for (const row of rows) if (row.status === AccountStatus.Closed) await this.notifyClosed(row.sid);
    }
    return updated;
  }

  /**
   * Moves a top-level account (a child of the Super Admin) and its whole tree to another organization.
   * Status codes as the spec's migration table.
   */
  async migrate(caller: Account, targetSid: string, organization: string | undefined): Promise<Account> {
    if (!caller.isSuperAdmin) throw new AppError('Forbidden', 'Only the Super Admin may migrate accounts');
    if (!organization)
      throw new AppError('PreconditionFailed', 'Organization (sid or domain name) is required');
    const target = await this.resolve(targetSid);
    if (!target) throw new AppError('NotFound', `Account ${targetSid} not found`);
    const org = await this.deps.store.findOrganization(organization);
    if (!org) throw new AppError('NotFound', `Organization ${organization} not found`);
    if (target.parentSid !== caller.sid) {
      throw new AppError('InvalidParameter', `Account ${target.sid} is not a top-level account`);
    }
    if (target.organizationSid === org.sid) {
      throw new AppError('InvalidParameter', `Account ${target.sid} is already in organization ${org.sid}`);
    }
    const tree = [target, ...(await this.deps.store.listDescendants(target.sid))];
    const rows = await this.deps.store.updateMany(
      tree.map((a) => ({ sid: a.sid, patch: { organizationSid: org.sid } })),
    );
    await this.afterWrite(rows, [], new Map());
    for (const row of rows) for (const l of this.migratedListeners) await l(row.sid, org.sid);
    return rows.find((r) => r.sid === target.sid) as Account;
  }

  async createOrganization(caller: Account, domainName: string | undefined): Promise<Organization> {
    if (!caller.isSuperAdmin)
      throw new AppError('Forbidden', 'Only the Super Admin may create organizations');
    const domain = domainName?.trim().toLowerCase();
    if (!domain) throw new AppError('MissingParameter', 'DomainName is required');
    if (
      !/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(
        domain,
      )
    ) {
      throw new AppError('InvalidParameter', `DomainName "${domain}" is not a valid domain name`);
    }
    const at = new Date(this.now());
    const org: Organization = {
      sid: newSid(SidPrefix.Organization),
      domainName: domain,
      status: 'active',
      dateCreated: at,
      dateUpdated: at,
    };
    await this.deps.store.insertOrganization(org);
    return org;
  }

  async listOrganizations(): Promise<Organization[]> {
    return this.deps.store.listOrganizations();
  }

  get superAdmin(): string | null {
    return this.superAdminSid;
  }

  // ---------------------------------------------------------------- internals

  /** Which descendants move with a status change of `target`, and the event `target` itself gets. */
  private async planStatusChange(
    target: Account,
    status: AccountStatus,
  ): Promise<{
    own: AccountEvent;
    descendants: Array<{ sid: string; patch: AccountPatch; event: AccountEvent }>;
  }> {
    const origin = target.sid;
    const descendants = await this.deps.store.listDescendants(target.sid);
    const out: Array<{ sid: string; patch: AccountPatch; event: AccountEvent }> = [];
    if (status === AccountStatus.Suspended) {
      for (const d of descendants) {
        if (d.status === AccountStatus.Active) {
          out.push({
            sid: d.sid,
            patch: { status: 'suspended', suspendedBy: origin },
            event: { type: 'account.suspend', origin },
          });
        }
      }
      return { own: { type: 'account.suspend', origin }, descendants: out };
    }
    if (status === AccountStatus.Closed) {
      for (const d of descendants) {
        if (d.status !== AccountStatus.Closed) {
          out.push({
            sid: d.sid,
            patch: { status: 'closed', suspendedBy: null },
            event: { type: 'account.close', origin },
          });
        }
      }
      return { own: { type: 'account.close', origin }, descendants: out };
    }
    // active
    if (target.parentSid) {
      const parent = await this.get(target.parentSid);
      if (parent && parent.status !== AccountStatus.Active) {
        throw new AppError(
          'Conflict',
          `Account ${target.sid} cannot be activated while its parent is ${parent.status}`,
        );
      }
    }
    for (const d of descendants) {
      if (d.status === AccountStatus.Suspended && d.suspendedBy === origin) {
        out.push({
          sid: d.sid,
          patch: { status: 'active', suspendedBy: null },
          event: { type: 'account.activate', origin },
        });
      }
    }
    return { own: { type: 'account.activate', origin }, descendants: out };
  }

  private async afterWrite(
    rows: Account[],
    eventSids: string[],
    events: Map<string, AccountEvent | undefined>,
  ) {
    for (const row of rows) {
      this.remember(row);
      if (eventSids.includes(row.sid)) {
        const ev = events.get(row.sid);
        const actor = await this.ensureActor(row, ev === undefined);
        // An actor rebuilt from the row just written is already where the event leads (a closed one
        // has even stopped): only an actor still at its old status takes the event.
        if (ev && statusOf(actor.getSnapshot()) !== row.status) actor.send(ev);
        await this.persistSnapshot(actor);
      }
      await this.deps.bus
        ?.publish(row.sid)
        .catch((e) => this.deps.logger.warn({ err: e }, 'account bus publish failed'));
    }
  }

  private async notifyClosed(sid: string): Promise<void> {
    for (const l of this.closedListeners) {
      try {
        await l(sid);
      } catch (e) {
        this.deps.logger.error({ err: e, accountSid: sid }, 'account-closed listener failed');
      }
    }
  }

  private remember(account: Account): void {
    this.cache.set(account.sid, { account, at: this.now() });
    this.emailIndex.set(account.emailAddress, account.sid);
  }

  /** Evicts an account from this node (cache and actor); next use reloads the record. */
  forget(sid: string): void {
    const hit = this.cache.get(sid);
    if (hit) this.emailIndex.delete(hit.account.emailAddress);
    this.cache.delete(sid);
    this.actors.evict(sid);
  }

  private actorFor(account: Account, snapshot?: AccountSnapshot): AccountActor {
    const actor = createActor(accountMachine, {
      input: { sid: account.sid, status: account.status, suspendedBy: account.suspendedBy },
      snapshot:
        snapshot ??
        snapshotAt({ sid: account.sid, status: account.status, suspendedBy: account.suspendedBy }),
    });
    actor.start();
    this.actors.set(account.sid, actor);
    return actor;
  }

  /**
   * The live actor of `account`: the one on this node, else restored from its Redis snapshot when that
   * agrees with the record, else positioned from the record (Postgres wins).
   */
  async ensureActor(account: Account, syncToRecord = true): Promise<AccountActor> {
    const live = this.actors.get(account.sid);
    if (live && (!syncToRecord || statusOf(live.getSnapshot()) === account.status)) return live;
    const saved = await this.deps.snapshots.load<AccountSnapshot>('account', account.sid);
    if (saved) {
      try {
        const restored = accountMachine.resolveState({ value: saved.value, context: saved.context });
        if (statusOf(restored) === account.status) return this.actorFor(account, restored);
      } catch {
        // unreadable snapshot: rebuild from the record below
      }
    }
    const actor = this.actorFor(account);
    await this.persistSnapshot(actor);
    return actor;
  }

  private async persistSnapshot(actor: AccountActor): Promise<void> {
    await this.deps.snapshots.save('account', actor.getSnapshot().context.sid, actor.getPersistedSnapshot());
  }
}

function validateFriendlyName(name: string): void {
  if (name.length === 0 || name.length > FRIENDLY_NAME_MAX) {
    throw new AppError('InvalidParameter', `FriendlyName must be 1 to ${FRIENDLY_NAME_MAX} characters`);
  }
}

function validatePassword(password: string): void {
  if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX) {
    throw new AppError('InvalidParameter', `Password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`);
  }
}

function parseRole(value: string): Role {
  const role = (Object.values(Role) as string[]).find((r) => r === value);
  if (!role) throw new AppError('InvalidParameter', `Role must be one of ${Object.values(Role).join(', ')}`);
  return role as Role;
}

function parseSettableStatus(value: string): AccountStatus {
  const allowed: AccountStatus[] = [AccountStatus.Active, AccountStatus.Suspended, AccountStatus.Closed];
  const status = allowed.find((s) => s === value);
  if (!status) throw new AppError('InvalidParameter', `Status must be one of ${allowed.join(', ')}`);
  return status;
}
