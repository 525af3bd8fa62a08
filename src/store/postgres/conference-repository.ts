/** Postgres implementation of the ConferenceStore port. */
import type {
  ConferenceEndReason,
  ConferenceFilter,
  ConferenceRecord,
  ConferenceStatus,
  ConferenceStore,
  ConferenceUpdate,
} from '../conference-store.js';
import { type Db, sql } from './db.js';

type Row = Record<string, unknown>;

const toConference = (r: Row): ConferenceRecord => ({
  sid: r.sid as string,
  accountSid: r.account_sid as string,
  friendlyName: r.friendly_name as string,
  status: r.status as ConferenceStatus,
  apiVersion: r.api_version as string,
  reasonConferenceEnded: (r.reason_conference_ended as ConferenceEndReason | null) ?? null,
  callSidEndingConference: (r.call_sid_ending_conference as string | null) ?? null,
  dateCreated: r.date_created as Date,
  dateUpdated: r.date_updated as Date,
});

export class PgConferenceStore implements ConferenceStore {
  constructor(private readonly db: Db) {}

  async insert(c: ConferenceRecord): Promise<void> {
    await this.db.query(sql`
      INSERT INTO conferences (sid, account_sid, friendly_name, status, api_version, reason_conference_ended,
        call_sid_ending_conference, date_created, date_updated)
      VALUES (${c.sid}, ${c.accountSid}, ${c.friendlyName}, ${c.status}, ${c.apiVersion},
        ${c.reasonConferenceEnded}, ${c.callSidEndingConference}, ${c.dateCreated}, ${c.dateUpdated})
      ON CONFLICT (sid) DO NOTHING`);
  }

  async update(sid: string, p: ConferenceUpdate): Promise<void> {
    const set = [sql`date_updated = ${p.dateUpdated}`];
    if (p.status !== undefined) set.push(sql`status = ${p.status}`);
    if (p.reasonConferenceEnded !== undefined)
      set.push(sql`reason_conference_ended = ${p.reasonConferenceEnded}`);
    if (p.callSidEndingConference !== undefined)
      set.push(sql`call_sid_ending_conference = ${p.callSidEndingConference}`);
    await this.db.query(sql`UPDATE conferences SET ${sql.join(set, sql`, `)} WHERE sid = ${sid}`);
  }

  async get(accountSid: string, sid: string): Promise<ConferenceRecord | null> {
    const [row] = await this.db.query(
      sql`SELECT * FROM conferences WHERE sid = ${sid} AND account_sid = ${accountSid}`,
    );
    return row ? toConference(row) : null;
  }

  async list(f: ConferenceFilter, page: { offset: number; limit: number }) {
    const where = [sql`account_sid = ${f.accountSid}`];
    if (f.status !== undefined) where.push(sql`status = ${f.status}`);
    if (f.friendlyName !== undefined) where.push(sql`friendly_name = ${f.friendlyName}`);
    if (f.createdFrom !== undefined) where.push(sql`date_created >= ${f.createdFrom}`);
    if (f.createdTo !== undefined) where.push(sql`date_created <= ${f.createdTo}`);
    if (f.updatedFrom !== undefined) where.push(sql`date_updated >= ${f.updatedFrom}`);
    if (f.updatedTo !== undefined) where.push(sql`date_updated <= ${f.updatedTo}`);
    const cond = sql.join(where, sql` AND `);
    const [count] = await this.db.query(sql`SELECT count(*)::int AS n FROM conferences WHERE ${cond}`);
    const rows = await this.db.query(
      sql`SELECT * FROM conferences WHERE ${cond} ORDER BY date_created DESC, sid DESC
          LIMIT ${page.limit} OFFSET ${page.offset}`,
    );
    return { total: (count?.n as number) ?? 0, items: rows.map(toConference) };
  }
}
