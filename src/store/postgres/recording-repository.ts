/** Postgres implementation of the RecordingStore port. */
import type { Recording, RecordingFilter, RecordingSort, RecordingStore } from '../recording-store.js';
import { type Db, sql } from './db.js';
import { orderBy } from './sql-helpers.js';

type Row = Record<string, unknown>;

const toRecording = (r: Row): Recording => ({
  sid: r.sid as string,
  accountSid: r.account_sid as string,
  callSid: (r.call_sid as string | null) ?? null,
  duration: Number(r.duration),
  apiVersion: r.api_version as string,
  sizeBytes: Number(r.size_bytes),
  dateCreated: r.date_created as Date,
  dateUpdated: r.date_updated as Date,
});

const SORT_COLUMNS: Record<RecordingSort, string> = {
  DateCreated: 'date_created',
  Duration: 'duration',
  CallSid: 'call_sid',
};

export class PgRecordingStore implements RecordingStore {
  constructor(private readonly db: Db) {}

  async insert(r: Recording): Promise<void> {
    await this.db.query(sql`
      INSERT INTO recordings (sid, account_sid, call_sid, duration, api_version, size_bytes, date_created, date_updated)
      VALUES (${r.sid}, ${r.accountSid}, ${r.callSid}, ${r.duration}, ${r.apiVersion}, ${r.sizeBytes},
        ${r.dateCreated}, ${r.dateUpdated})`);
  }

  async get(accountSid: string, sid: string): Promise<Recording | null> {
    const [row] = await this.db.query(
      sql`SELECT * FROM recordings WHERE sid = ${sid} AND account_sid = ${accountSid}`,
    );
    return row ? toRecording(row) : null;
  }

  async getAnyAccount(sid: string): Promise<Recording | null> {
    const [row] = await this.db.query(sql`SELECT * FROM recordings WHERE sid = ${sid}`);
    return row ? toRecording(row) : null;
  }

  async list(
    f: RecordingFilter,
    sort: { by: RecordingSort; direction: 'asc' | 'desc' },
    page: { offset: number; limit: number },
  ) {
    const where = [sql`account_sid = ${f.accountSid}`];
    if (f.callSid !== undefined) where.push(sql`call_sid = ${f.callSid}`);
    if (f.startTime !== undefined) where.push(sql`date_created >= ${f.startTime}`);
    if (f.endTime !== undefined) where.push(sql`date_created <= ${f.endTime}`);
    const cond = sql.join(where, sql` AND `);
    const [count] = await this.db.query(sql`SELECT count(*)::int AS n FROM recordings WHERE ${cond}`);
    const rows = await this.db.query(
      sql`SELECT * FROM recordings WHERE ${cond} ORDER BY ${orderBy(SORT_COLUMNS[sort.by], sort.direction)}
          LIMIT ${page.limit} OFFSET ${page.offset}`,
    );
    return { total: (count?.n as number) ?? 0, items: rows.map(toRecording) };
  }

  async delete(accountSid: string, sid: string): Promise<boolean> {
    const rows = await this.db.query(
      sql`DELETE FROM recordings WHERE sid = ${sid} AND account_sid = ${accountSid} RETURNING sid`,
    );
    return rows.length > 0;
  }
}
