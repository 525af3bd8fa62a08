/**
 * Account store port (spec §Account, §Organization). Postgres is the record; see
 * src/store/postgres/account-repository.ts for the implementation.
 */

export const AccountStatus = {
  Uninitialized: 'uninitialized',
  Active: 'active',
  Suspended: 'suspended',
  Closed: 'closed',
} as const;
export type AccountStatus = (typeof AccountStatus)[keyof typeof AccountStatus];
export const ACCOUNT_STATUSES: readonly AccountStatus[] = Object.values(AccountStatus);

export const Role = {
  Administrator: 'Administrator',
  Developer: 'Developer',
  ProvisioningAgent: 'ProvisioningAgent',
} as const;
export type Role = (typeof Role)[keyof typeof Role];
export const ROLES: readonly Role[] = Object.values(Role);

export interface Account {
  readonly sid: string;
  readonly parentSid: string | null;
  readonly organizationSid: string;
  readonly emailAddress: string;
  readonly friendlyName: string;
  readonly type: string;
  readonly status: AccountStatus;
  readonly suspendedBy: string | null;
  readonly role: Role;
  readonly isSuperAdmin: boolean;
  readonly authToken: string;
  readonly passwordHash: string;
  readonly dateCreated: Date;
  readonly dateUpdated: Date;
}

export interface Organization {
  readonly sid: string;
  readonly domainName: string;
  readonly status: string;
  readonly dateCreated: Date;
  readonly dateUpdated: Date;
}

export type AccountPatch = Partial<
  Pick<
    Account,
    'friendlyName' | 'status' | 'suspendedBy' | 'role' | 'authToken' | 'passwordHash' | 'organizationSid'
  >
>;

/** One row's change in an `updateMany` batch. */
export interface AccountUpdate {
  readonly sid: string;
  readonly patch: AccountPatch;
  /**
   * The status (and suspension) the change was decided from: the row must still have them, so two
   * concurrent status changes never both apply to what each read before the other wrote.
   */
  readonly expect?: Pick<Account, 'status' | 'suspendedBy'> | undefined;
}

export interface AccountStore {
  findBySid(sid: string): Promise<Account | null>;
  findByEmail(email: string): Promise<Account | null>;
  findSuperAdmin(): Promise<Account | null>;
  /** Every descendant of `sid` (children, grandchildren...), oldest first; not `sid` itself. */
  listDescendants(sid: string): Promise<Account[]>;
  /** Inserts; throws AppError AlreadyExists when the email address is taken. */
  insert(account: Account): Promise<void>;
  /**
   * Applies patches to several accounts in one transaction; returns the updated rows. Throws AppError
   * Conflict, writing nothing, when a row no longer matches its `expect`.
   */
  updateMany(updates: ReadonlyArray<AccountUpdate>): Promise<Account[]>;

  findOrganization(sidOrDomain: string): Promise<Organization | null>;
  listOrganizations(): Promise<Organization[]>;
  insertOrganization(org: Organization): Promise<void>;
}

/** Publishes and receives "account changed" notices between nodes (Redis pub/sub in production). */
export interface AccountChangeBus {
  publish(sid: string): Promise<void>;
  subscribe(onChange: (sid: string) => void): Promise<void>;
  /**
   * Calls `onGap` whenever notices may have been missed (the subscription came back after a
   * break), and says whether this bus can tell at all. A cache whose bus cannot tell keeps short
   * lifetimes as its safety net.
   */
  watchGaps?(onGap: () => void): boolean;
}
