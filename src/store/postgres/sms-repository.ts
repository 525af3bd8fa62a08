/** Postgres implementation of the SmsStore port (migration 0010_sms_email.sql). */
import {
  type SmsFilter,
  type SmsMessage,
  type SmsSort,
  SmsStatus,
  type SmsStore,
  type SmsTransition,
} from '../sms-store.js';
import { type Db, sql } from './db.js';
import { orderBy } from './sql-helpers.js';

type Row = Record<string, unknown>;

const toMessage = (r: Row): SmsMessage => ({
  sid: r.sid as string,
  accountSid: r.account_sid as string,
  from: r.from_address as string,
  to: r.to_address as string,
  body: r.body as string,
  status: r.status as SmsMessage['status'],
  direction: r.direction as SmsMessage['direction'],
  channel: r.channel as SmsMessage['channel'],
  price: r.price === null || r.price === undefined ? null : String(r.price),
  priceUnit: r.price_unit as string,
  apiVersion: r.api_version as string,
  errorCode: r.error_code === null ? null : Number(r.error_code),
  errorMessage: (r.error_message as string | null) ?? null,
  statusCallback: (r.status_callback as string | null) ?? null,
  destinationNetworkId: (r.destination_network_id as string | null) ?? null,
  segments: Number(r.segments),
  possibleDuplicate: Boolean(r.possible_duplicate),
  dateSent: (r.date_sent as Date | null) ?? null,
  dateCreated: r.date_created as Date,
  dateUpdated: r.date_updated as Date,
});

const SORT_COLUMNS: Record<SmsSort, string> = {
  DateCreated: 'date_created',
  From: 'from_address',
  To: 'to_address',
  Direction: 'direction',
  Status: 'status',
  Body: 'body',
  Price: 'price',
};

/** LIKE pattern for a substring match: the user's %, _ and \ are literal. */
const contains = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export class PgSmsStore implements SmsStore {
  constructor(private readonly db: Db) {}

  async insert(m: SmsMessage, claim?: { readonly node: string; readonly until: Date }): Promise<void> {
    await this.db.query(sql`
      INSERT INTO sms_messages (sid, account_sid, from_address, to_address, body, status, direction, channel,
        price, price_unit, api_version, error_code, error_message, status_callback, destination_network_id,
        segments, possible_duplicate, claimed_by, claimed_until, date_sent, date_created, date_updated)
      VALUES (${m.sid}, ${m.accountSid}, ${m.from}, ${m.to}, ${m.body}, ${m.status}, ${m.direction}, ${m.channel},
        ${m.price}, ${m.priceUnit}, ${m.apiVersion}, ${m.errorCode}, ${m.errorMessage}, ${m.statusCallback},
        ${m.destinationNetworkId}, ${m.segments}, ${m.possibleDuplicate}, ${claim?.node ?? null},
        ${claim?.until ?? null}, ${m.dateSent}, ${m.dateCreated}, ${m.dateUpdated})
      ON CONFLICT (sid) DO NOTHING`);
  }

  async get(accountSid: string, sid: string): Promise<SmsMessage | null> {
    const [row] = await this.db.query(
      sql`SELECT * FROM sms_messages WHERE sid = ${sid} AND account_sid = ${accountSid}`,
    );
    return row ? toMessage(row) : null;
  }

  async getAnyAccount(sid: string): Promise<SmsMessage | null> {
    const [row] = await this.db.query(sql`SELECT * FROM sms_messages WHERE sid = ${sid}`);
    return row ? toMessage(row) : null;
  }

  async list(
    f: SmsFilter,
    sort: { by: SmsSort; direction: 'asc' | 'desc' },
    page: { offset: number; limit: number },
  ) {
    const where = [sql`account_sid = ${f.accountSid}`];
    if (f.to !== undefined) where.push(sql`to_address = ${f.to}`);
    if (f.from !== undefined) where.push(sql`from_address = ${f.from}`);
    if (f.startTime !== undefined) where.push(sql`date_created >= ${f.startTime}`);
    if (f.endTime !== undefined) where.push(sql`date_created <= ${f.endTime}`);
    if (f.body !== undefined) where.push(sql`body ILIKE ${contains(f.body)}`);
    const cond = sql.join(where, sql` AND `);
    const [count] = await this.db.query(sql`SELECT count(*)::int AS n FROM sms_messages WHERE ${cond}`);
    const rows = await this.db.query(
      sql`SELECT * FROM sms_messages WHERE ${cond} ORDER BY ${orderBy(SORT_COLUMNS[sort.by], sort.direction)}
          LIMIT ${page.limit} OFFSET ${page.offset}`,
    );
    return { total: (count?.n as number) ?? 0, items: rows.map(toMessage) };
  }

  async transition(t: SmsTransition): Promise<SmsMessage | null> {
    const sets = [sql`status = ${t.to}`, sql`date_updated = now()`];
    if (t.errorCode !== undefined) sets.push(sql`error_code = ${t.errorCode}`);
    if (t.errorMessage !== undefined) sets.push(sql`error_message = ${t.errorMessage}`);
    if (t.possibleDuplicate) sets.push(sql`possible_duplicate = true`);
    if (t.dateSent !== undefined) sets.push(sql`date_sent = ${t.dateSent}`);
    if (t.providerIds !== undefined) sets.push(sql`segments = ${t.providerIds.length}`);
    // A final status ends the resume lease: nobody needs to pick the message up again.
    if (t.to !== SmsStatus.Queued && t.to !== SmsStatus.Sending) {
      sets.push(sql`claimed_by = NULL`, sql`claimed_until = NULL`);
    }
    const update = sql`UPDATE sms_messages SET ${sql.join(sets, sql`, `)}
      WHERE sid = ${t.sid} AND status = ANY(${[...t.from]}::text[]) RETURNING *`;
    const ids = t.providerIds ?? [];
    if (ids.length === 0) {
      const [row] = await this.db.query(update);
      return row ? toMessage(row) : null;
    }
    // One round trip: the status change and the segment ids, or neither.
    const [row] = await this.db.query(sql`
      WITH u AS (${update}),
      ids AS (
        INSERT INTO sms_provider_ids (provider_id, sms_sid, segment)
        SELECT p.id, u.sid, p.n - 1 FROM u, unnest(${[...ids]}::text[]) WITH ORDINALITY AS p(id, n)
        ON CONFLICT (provider_id) DO UPDATE SET sms_sid = EXCLUDED.sms_sid, segment = EXCLUDED.segment
      )
      SELECT * FROM u`);
    return row ? toMessage(row) : null;
  }

  async findByProviderId(providerId: string) {
    const rows = await this.db.query(sql`
      SELECT m.*, (SELECT array_agg(p2.provider_id ORDER BY p2.segment) FROM sms_provider_ids p2
                   WHERE p2.sms_sid = m.sid) AS provider_ids
      FROM sms_provider_ids p JOIN sms_messages m ON m.sid = p.sms_sid
      WHERE p.provider_id = ${providerId}`);
    const row = rows[0];
    return row ? { message: toMessage(row), providerIds: (row.provider_ids as string[] | null) ?? [] } : null;
  }

  async claimPending(node: string, leaseMs: number, limit: number): Promise<SmsMessage[]> {
    const rows = await this.db.query(sql`
      UPDATE sms_messages SET claimed_by = ${node}, claimed_until = now() + ${`${leaseMs} milliseconds`}::interval
      WHERE sid IN (
        SELECT sid FROM sms_messages
        WHERE status IN ('queued', 'sending') AND channel = 'smpp'
          AND (claimed_until IS NULL OR claimed_until < now() OR claimed_by = ${node})
        ORDER BY date_created
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED)
      RETURNING *`);
    return rows.map(toMessage).sort((a, b) => a.dateCreated.getTime() - b.dateCreated.getTime());
  }

  async releaseClaims(node: string): Promise<void> {
    await this.db.query(
      sql`UPDATE sms_messages SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = ${node}`,
    );
  }
}
