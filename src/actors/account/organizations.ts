/**
 * Organizations (spec §Organization) and account migration between them (spec §Endpoints ›
 * Accounts, migration table). Only the Super Admin creates organizations or migrates accounts.
 */
import { AppError } from '../../errors.js';
import { newSid, SidPrefix } from '../../ids.js';
import type { Account, Organization } from '../../store/account-store.js';
import type { AccountRecords } from './account-records.js';

/** Listeners told when an account moved to another organization. */
export type MigratedListener = (accountSid: string, organizationSid: string) => Promise<void> | void;

/** RFC 1035 host name: dot-separated labels of letters, digits and inner hyphens, 253 at most. */
const DOMAIN_RE =
  /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * Organizations are never changed or deleted once created, so a found one is cached for good; a
 * miss (every carrier INVITE asks whether its From domain is ours) is remembered briefly, so an
 * organization created on another node is seen within that time.
 */
const MISS_TTL_MS = 5_000;
const CACHE_MAX = 10_000;

export class Organizations {
  private readonly migratedListeners: MigratedListener[] = [];
  private readonly cache = new Map<string, { readonly org: Organization | null; readonly until: number }>();

  constructor(
    private readonly records: AccountRecords,
    private readonly now: () => number,
  ) {}

  onMigrated(listener: MigratedListener): void {
    this.migratedListeners.push(listener);
  }

  async get(sidOrDomain: string): Promise<Organization | null> {
    const hit = this.cache.get(sidOrDomain);
    if (hit && (hit.org !== null || hit.until > this.now())) return hit.org;
    const org = await this.records.store.findOrganization(sidOrDomain);
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    this.cache.set(sidOrDomain, { org, until: this.now() + MISS_TTL_MS });
    return org;
  }

  list(): Promise<Organization[]> {
    return this.records.store.listOrganizations();
  }

  /** The organization of `domain`, created when missing (tolerates another node creating it first). */
  async ensure(domain: string): Promise<Organization> {
    const found = await this.get(domain);
    if (found) return found;
    const org = this.newOrganization(domain.toLowerCase());
    try {
      await this.records.store.insertOrganization(org);
      this.forgetMisses();
      return org;
    } catch (e) {
      // Another node created it meanwhile (nodes starting together): the miss cached by the look-up
      // above would hide it from the look-up below.
      this.forgetMisses();
      const raced = await this.get(domain);
      if (!raced) throw e;
      return raced;
    }
  }

  async create(caller: Account, domainName: string | undefined): Promise<Organization> {
    if (!caller.isSuperAdmin)
      throw new AppError('Forbidden', 'Only the Super Admin may create organizations');
    const domain = domainName?.trim().toLowerCase();
    if (!domain) throw new AppError('MissingParameter', 'DomainName is required');
    if (!DOMAIN_RE.test(domain)) {
      throw new AppError('InvalidParameter', `DomainName "${domain}" is not a valid domain name`);
    }
    const org = this.newOrganization(domain);
    await this.records.store.insertOrganization(org);
    this.forgetMisses();
    return org;
  }

  /**
   * The organization a new account of `caller` goes to: the caller's, or `requested` (sid or domain)
   * when it exists and the caller may place accounts there (the Super Admin only, for another one).
   */
  async placementFor(caller: Account, requested: string | undefined): Promise<string> {
    if (requested === undefined) return caller.organizationSid;
    const org = await this.get(requested);
    if (!org) throw new AppError('InvalidParameter', `Unknown organization ${requested}`);
    if (org.sid !== caller.organizationSid && !caller.isSuperAdmin) {
      throw new AppError('Forbidden', 'Only the Super Admin may create an account in another organization');
    }
    return org.sid;
  }

  /**
   * Moves a top-level account (a child of the Super Admin) and its whole tree to another organization.
   * Status codes as the spec's migration table.
   */
  async migrate(caller: Account, targetSid: string, organization: string | undefined): Promise<Account> {
    if (!caller.isSuperAdmin) throw new AppError('Forbidden', 'Only the Super Admin may migrate accounts');
    if (!organization) {
      throw new AppError('PreconditionFailed', 'Organization (sid or domain name) is required');
    }
    const target = await this.records.resolve(targetSid);
    if (!target) throw new AppError('NotFound', `Account ${targetSid} not found`);
    const org = await this.get(organization);
    if (!org) throw new AppError('NotFound', `Organization ${organization} not found`);
    if (target.parentSid !== caller.sid) {
      throw new AppError('InvalidParameter', `Account ${target.sid} is not a top-level account`);
    }
    if (target.organizationSid === org.sid) {
      throw new AppError('InvalidParameter', `Account ${target.sid} is already in organization ${org.sid}`);
    }
    const tree = [target, ...(await this.records.descendants(target.sid))];
    const rows = await this.records.update(
      tree.map((a) => ({ sid: a.sid, patch: { organizationSid: org.sid } })),
    );
    for (const row of rows) for (const l of this.migratedListeners) await l(row.sid, org.sid);
    const moved = rows.find((r) => r.sid === target.sid);
    if (!moved) throw new AppError('NotFound', `Account ${targetSid} not found`);
    return moved;
  }

  private forgetMisses(): void {
    for (const [key, entry] of this.cache) if (entry.org === null) this.cache.delete(key);
  }

  private newOrganization(domainName: string): Organization {
    const at = new Date(this.now());
    return {
      sid: newSid(SidPrefix.Organization),
      domainName,
      status: 'active',
      dateCreated: at,
      dateUpdated: at,
    };
  }
}
