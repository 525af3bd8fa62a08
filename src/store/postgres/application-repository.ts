/** Postgres implementation of the ApplicationStore port. */
import type { Application, ApplicationPatch, ApplicationStore } from '../application-store.js';
import { type Db, sql } from './db.js';
import { updateSet } from './sql-helpers.js';

type Row = Record<string, unknown>;

const toApplication = (r: Row): Application => ({
  sid: r.sid as string,
  accountSid: r.account_sid as string,
  friendlyName: r.friendly_name as string,
  apiVersion: r.api_version as string,
  voiceCallerIdLookup: r.voice_caller_id_lookup as boolean,
  rcmlUrl: (r.rcml_url as string | null) ?? null,
  kind: r.kind as Application['kind'],
  dateCreated: r.date_created as Date,
  dateUpdated: r.date_updated as Date,
});

const COLUMNS: Record<keyof ApplicationPatch, string> = {
  friendlyName: 'friendly_name',
  apiVersion: 'api_version',
  voiceCallerIdLookup: 'voice_caller_id_lookup',
  rcmlUrl: 'rcml_url',
  kind: 'kind',
};

export class PgApplicationStore implements ApplicationStore {
  constructor(private readonly db: Db) {}

  async insert(a: Application): Promise<void> {
    await this.db.query(sql`
      INSERT INTO applications (sid, account_sid, friendly_name, api_version, voice_caller_id_lookup, rcml_url, kind,
        date_created, date_updated)
      VALUES (${a.sid}, ${a.accountSid}, ${a.friendlyName}, ${a.apiVersion}, ${a.voiceCallerIdLookup}, ${a.rcmlUrl},
        ${a.kind}, ${a.dateCreated}, ${a.dateUpdated})`);
  }

  async get(accountSid: string, sid: string): Promise<Application | null> {
    const [row] = await this.db.query(
      sql`SELECT * FROM applications WHERE sid = ${sid} AND account_sid = ${accountSid}`,
    );
    return row ? toApplication(row) : null;
  }

  async list(accountSid: string): Promise<Application[]> {
    const rows = await this.db.query(
      sql`SELECT * FROM applications WHERE account_sid = ${accountSid} ORDER BY date_created, sid`,
    );
    return rows.map(toApplication);
  }

  async update(accountSid: string, sid: string, patch: ApplicationPatch): Promise<Application | null> {
    const [row] = await this.db.query(
      sql`UPDATE applications SET ${updateSet(patch, COLUMNS)} WHERE sid = ${sid} AND account_sid = ${accountSid} RETURNING *`,
    );
    return row ? toApplication(row) : null;
  }

  async delete(accountSid: string, sid: string): Promise<boolean> {
    const rows = await this.db.query(
      sql`DELETE FROM applications WHERE sid = ${sid} AND account_sid = ${accountSid} RETURNING sid`,
    );
    return rows.length > 0;
  }

  async deleteAllOf(accountSid: string): Promise<void> {
    await this.db.query(sql`DELETE FROM applications WHERE account_sid = ${accountSid}`);
  }
}
