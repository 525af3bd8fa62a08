/** Postgres implementation of the CallerIdStore port. */
import type { CallerIdFilter, CallerIdStore, OutgoingCallerId } from '../caller-id-store.js';
import { type Db, sql } from './db.js';

type Row = Record<string, unknown>;

function toCallerId(r: Row): OutgoingCallerId {
  return {
    sid: r.sid as string,
    accountSid: r.account_sid as string,
    friendlyName: r.friendly_name as string,
    phoneNumber: r.phone_number as string,
    dateCreated: r.date_created as Date,
    dateUpdated: r.date_updated as Date,
  };
}

export class PgCallerIdStore implements CallerIdStore {
  constructor(private readonly db: Db) {}

  async insert(c: OutgoingCallerId): Promise<boolean> {
    const rows = await this.db.query(sql`
      INSERT INTO outgoing_caller_ids (sid, account_sid, friendly_name, phone_number, date_created, date_updated)
      VALUES (${c.sid}, ${c.accountSid}, ${c.friendlyName}, ${c.phoneNumber}, ${c.dateCreated}, ${c.dateUpdated})
      ON CONFLICT (account_sid, phone_number) DO NOTHING RETURNING sid`);
    return rows.length > 0;
  }

  async get(accountSid: string, sid: string): Promise<OutgoingCallerId | null> {
    const [row] = await this.db.query(
      sql`SELECT * FROM outgoing_caller_ids WHERE sid = ${sid} AND account_sid = ${accountSid}`,
    );
    return row ? toCallerId(row) : null;
  }

  async list(f: CallerIdFilter): Promise<OutgoingCallerId[]> {
    const where = [sql`account_sid = ${f.accountSid}`];
    if (f.phoneNumber !== undefined) where.push(sql`phone_number = ${f.phoneNumber}`);
    if (f.friendlyName !== undefined) where.push(sql`friendly_name = ${f.friendlyName}`);
    const rows = await this.db.query(
      sql`SELECT * FROM outgoing_caller_ids WHERE ${sql.join(where, sql` AND `)} ORDER BY date_created, sid`,
    );
    return rows.map(toCallerId);
  }

  async rename(accountSid: string, sid: string, friendlyName: string): Promise<OutgoingCallerId | null> {
    const [row] = await this.db.query(sql`
      UPDATE outgoing_caller_ids SET friendly_name = ${friendlyName}, date_updated = now()
      WHERE sid = ${sid} AND account_sid = ${accountSid} RETURNING *`);
    return row ? toCallerId(row) : null;
  }

  async delete(accountSid: string, sid: string): Promise<boolean> {
    const rows = await this.db.query(
      sql`DELETE FROM outgoing_caller_ids WHERE sid = ${sid} AND account_sid = ${accountSid} RETURNING sid`,
    );
    return rows.length > 0;
  }

  async deleteAllOf(accountSid: string): Promise<void> {
    await this.db.query(sql`DELETE FROM outgoing_caller_ids WHERE account_sid = ${accountSid}`);
  }

  async has(accountSid: string, e164: string): Promise<boolean> {
    const rows = await this.db.query(
      sql`SELECT 1 FROM outgoing_caller_ids WHERE account_sid = ${accountSid} AND phone_number = ${e164}`,
    );
    return rows.length > 0;
  }
}
