/** Postgres implementation of the ClientStore port. */
import { AppError } from '../../errors.js';
import type { Client, ClientPatch, ClientStore, DigestSubject } from '../client-store.js';
import { type Db, sql } from './db.js';
import { updateSet } from './sql-helpers.js';

type Row = Record<string, unknown>;

const toClient = (r: Row): Client => ({
  sid: r.sid as string,
  accountSid: r.account_sid as string,
  organizationSid: r.organization_sid as string,
  login: r.login as string,
  friendlyName: r.friendly_name as string,
  apiVersion: r.api_version as string,
  status: r.status === 0 ? 0 : 1,
  ha1: r.ha1 as string,
  realm: r.realm as string,
  voiceUrl: (r.voice_url as string | null) ?? null,
  voiceMethod: r.voice_method as Client['voiceMethod'],
  voiceFallbackUrl: (r.voice_fallback_url as string | null) ?? null,
  voiceFallbackMethod: r.voice_fallback_method as Client['voiceFallbackMethod'],
  voiceApplicationSid: (r.voice_application_sid as string | null) ?? null,
  dateCreated: r.date_created as Date,
  dateUpdated: r.date_updated as Date,
});

const COLUMNS: Record<keyof ClientPatch, string> = {
  friendlyName: 'friendly_name',
  status: 'status',
  ha1: 'ha1',
  realm: 'realm',
  voiceUrl: 'voice_url',
  voiceMethod: 'voice_method',
  voiceFallbackUrl: 'voice_fallback_url',
  voiceFallbackMethod: 'voice_fallback_method',
  voiceApplicationSid: 'voice_application_sid',
};

export class PgClientStore implements ClientStore {
  constructor(private readonly db: Db) {}

  async insert(c: Client): Promise<void> {
    try {
      await this.db.query(sql`
        INSERT INTO clients (sid, account_sid, organization_sid, login, friendly_name, api_version, status, ha1, realm,
          voice_url, voice_method, voice_fallback_url, voice_fallback_method, voice_application_sid, date_created,
          date_updated)
        VALUES (${c.sid}, ${c.accountSid}, ${c.organizationSid}, ${c.login}, ${c.friendlyName}, ${c.apiVersion},
          ${c.status}, ${c.ha1}, ${c.realm}, ${c.voiceUrl}, ${c.voiceMethod}, ${c.voiceFallbackUrl},
          ${c.voiceFallbackMethod}, ${c.voiceApplicationSid}, ${c.dateCreated}, ${c.dateUpdated})`);
    } catch (e) {
      if ((e as { code?: string }).code === '23505') {
        throw new AppError(
          'AlreadyExists',
          `A client with Login "${c.login}" already exists in this organization`,
        );
      }
      throw e;
    }
  }

  async get(accountSid: string, sid: string): Promise<Client | null> {
    const [row] = await this.db.query(
      sql`SELECT * FROM clients WHERE sid = ${sid} AND account_sid = ${accountSid}`,
    );
    return row ? toClient(row) : null;
  }

  async list(accountSid: string): Promise<Client[]> {
    const rows = await this.db.query(
      sql`SELECT * FROM clients WHERE account_sid = ${accountSid} ORDER BY date_created, sid`,
    );
    return rows.map(toClient);
  }

  async update(accountSid: string, sid: string, patch: ClientPatch): Promise<Client | null> {
    const [row] = await this.db.query(
      sql`UPDATE clients SET ${updateSet(patch, COLUMNS)} WHERE sid = ${sid} AND account_sid = ${accountSid} RETURNING *`,
    );
    return row ? toClient(row) : null;
  }

  async delete(accountSid: string, sid: string): Promise<boolean> {
    const rows = await this.db.query(
      sql`DELETE FROM clients WHERE sid = ${sid} AND account_sid = ${accountSid} RETURNING sid`,
    );
    return rows.length > 0;
  }

  async deleteAllOf(accountSid: string): Promise<void> {
    await this.db.query(sql`DELETE FROM clients WHERE account_sid = ${accountSid}`);
  }

  async moveToOrganization(accountSid: string, organizationSid: string): Promise<void> {
    await this.db.query(
      sql`UPDATE clients SET organization_sid = ${organizationSid}, date_updated = now() WHERE account_sid = ${accountSid}`,
    );
  }

  async findForDigest(domain: string, login: string): Promise<DigestSubject | null> {
    const [row] = await this.db.query(sql`
      SELECT c.*, a.status AS account_status FROM clients c
        JOIN organizations o ON o.sid = c.organization_sid
        JOIN accounts a ON a.sid = c.account_sid
       WHERE o.domain_name = ${domain.toLowerCase()} AND c.login = ${login}`);
    return row ? { client: toClient(row), accountStatus: row.account_status as string } : null;
  }
}
