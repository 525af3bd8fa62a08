/** Postgres implementation of the AccountStore port. Rows are mapped to domain types here. */
import { AppError } from '../../errors.js';
import type { Account, AccountPatch, AccountStore, AccountUpdate, Organization } from '../account-store.js';
import { type Db, sql } from './db.js';
import { updateSet } from './sql-helpers.js';

type Row = Record<string, unknown>;

const toAccount = (r: Row): Account => ({
  sid: r.sid as string,
  parentSid: (r.parent_sid as string | null) ?? null,
  organizationSid: r.organization_sid as string,
  emailAddress: r.email_address as string,
  friendlyName: r.friendly_name as string,
  type: r.type as string,
  status: r.status as Account['status'],
  suspendedBy: (r.suspended_by as string | null) ?? null,
  role: r.role as Account['role'],
  isSuperAdmin: r.is_super_admin as boolean,
  authToken: r.auth_token as string,
  passwordHash: r.password_hash as string,
  dateCreated: r.date_created as Date,
  dateUpdated: r.date_updated as Date,
});

const toOrganization = (r: Row): Organization => ({
  sid: r.sid as string,
  domainName: r.domain_name as string,
  status: r.status as string,
  dateCreated: r.date_created as Date,
  dateUpdated: r.date_updated as Date,
});

const COLUMNS: Record<keyof AccountPatch, string> = {
  friendlyName: 'friendly_name',
  status: 'status',
  suspendedBy: 'suspended_by',
  role: 'role',
  authToken: 'auth_token',
  passwordHash: 'password_hash',
  organizationSid: 'organization_sid',
};

export class PgAccountStore implements AccountStore {
  constructor(private readonly db: Db) {}

  async findBySid(sid: string): Promise<Account | null> {
    const [row] = await this.db.query(sql`SELECT * FROM accounts WHERE sid = ${sid}`);
    return row ? toAccount(row) : null;
  }

  async findByEmail(email: string): Promise<Account | null> {
    const [row] = await this.db.query(
      sql`SELECT * FROM accounts WHERE email_address = ${email.toLowerCase()}`,
    );
    return row ? toAccount(row) : null;
  }

  async findSuperAdmin(): Promise<Account | null> {
    const [row] = await this.db.query(sql`SELECT * FROM accounts WHERE is_super_admin`);
    return row ? toAccount(row) : null;
  }

  async listDescendants(sid: string): Promise<Account[]> {
    const rows = await this.db.query(sql`
      WITH RECURSIVE tree AS (
        SELECT * FROM accounts WHERE parent_sid = ${sid}
        UNION ALL
        SELECT a.* FROM accounts a JOIN tree t ON a.parent_sid = t.sid
      )
      SELECT * FROM tree ORDER BY date_created, sid`);
    return rows.map(toAccount);
  }

  async insert(a: Account): Promise<void> {
    try {
      await this.db.query(sql`
        INSERT INTO accounts (sid, parent_sid, organization_sid, email_address, friendly_name, type, status,
          suspended_by, role, is_super_admin, auth_token, password_hash, date_created, date_updated)
        VALUES (${a.sid}, ${a.parentSid}, ${a.organizationSid}, ${a.emailAddress}, ${a.friendlyName}, ${a.type},
          ${a.status}, ${a.suspendedBy}, ${a.role}, ${a.isSuperAdmin}, ${a.authToken}, ${a.passwordHash},
          ${a.dateCreated}, ${a.dateUpdated})`);
    } catch (e) {
      if ((e as { code?: string }).code === '23505') {
        throw new AppError('AlreadyExists', `An account with email address ${a.emailAddress} already exists`);
      }
      throw e;
    }
  }

  async updateMany(updates: ReadonlyArray<AccountUpdate>): Promise<Account[]> {
    if (updates.length === 0) return [];
    return this.db.tx(async (tx) => {
      const out: Account[] = [];
      for (const { sid, patch, expect } of updates) {
        const still = expect
          ? sql` AND status = ${expect.status} AND suspended_by IS NOT DISTINCT FROM ${expect.suspendedBy}`
          : sql``;
        const [row] = await tx.query(
          sql`UPDATE accounts SET ${updateSet(patch, COLUMNS)} WHERE sid = ${sid}${still} RETURNING *`,
        );
        if (row) out.push(toAccount(row));
        // Throwing rolls the whole batch back.
        else if (expect)
          throw new AppError('Conflict', `Account ${sid} changed meanwhile; read it again and retry`);
      }
      return out;
    });
  }

  async findOrganization(sidOrDomain: string): Promise<Organization | null> {
    const [row] = await this.db.query(
      sql`SELECT * FROM organizations WHERE sid = ${sidOrDomain} OR domain_name = ${sidOrDomain.toLowerCase()}`,
    );
    return row ? toOrganization(row) : null;
  }

  async listOrganizations(): Promise<Organization[]> {
    return (await this.db.query(sql`SELECT * FROM organizations ORDER BY date_created, sid`)).map(
      toOrganization,
    );
  }

  async insertOrganization(o: Organization): Promise<void> {
    try {
      await this.db.query(sql`
        INSERT INTO organizations (sid, domain_name, status, date_created, date_updated)
        VALUES (${o.sid}, ${o.domainName}, ${o.status}, ${o.dateCreated}, ${o.dateUpdated})`);
    } catch (e) {
      if ((e as { code?: string }).code === '23505') {
        throw new AppError('AlreadyExists', `Organization ${o.domainName} already exists`);
      }
      throw e;
    }
  }
}
