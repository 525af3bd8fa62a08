/** Postgres implementation of the SmsStore port (migration 0010_sms_email.sql). */
import type {
  SegmentOutcome,
  SmsFilter,
  SmsMessage,
  SmsSort,
  SmsStore,
  SmsTransition,
} from '../sms-store.js';
import { type Db, sql } from './db.js';
import { GroupCommit } from './group-commit.js';
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
  submitAttempted: Boolean(r.submit_attempted),
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

/** One request's outcome in a batch: its result, or why it was not written. */
type Outcome<R> = { readonly ok: R } | { readonly err: unknown };

/**
 * Writes a batch in one statement; when that fails, row by row, so one bad row (text the store
 * refuses, a constraint) fails only its own request and the others of its batch are still written.
 */
async function isolated<T, R>(
  batch: readonly T[],
  write: (rows: readonly T[]) => Promise<R[]>,
): Promise<Outcome<R>[]> {
  try {
    return (await write(batch)).map((ok) => ({ ok }));
  } catch (err) {
    if (batch.length === 1) return [{ err }];
    return Promise.all(
      batch.map((row) =>
        write([row]).then(
          ([ok]) => ({ ok: ok as R }),
          (e: unknown) => ({ err: e }),
        ),
      ),
    );
  }
}

const settle = <R>(o: Outcome<R>): R => {
  if ('err' in o) throw o.err;
  return o.ok;
};

type NewSms = { m: SmsMessage; claim?: { node: string; until: Date } | undefined };

/**
 * Postgres SmsStore. Inserts, submit attempts and status transitions are group-committed (see
 * GroupCommit): what many messages ask for while the previous batch is being written goes in one
 * statement, and each caller's promise settles only once its batch has committed, so an accepted
 * message is in Postgres before the API answers and `submit_attempted` is before the submit_sm.
 */
export class PgSmsStore implements SmsStore {
  readonly #inserts = new GroupCommit<NewSms, Outcome<undefined>>((b) =>
    isolated(b, (rows) => this.#insertBatch(rows)),
  );
  readonly #transitions = new GroupCommit<SmsTransition, Outcome<SmsMessage | null>>((b) =>
    isolated(b, (rows) => this.#transitionBatch(rows)),
  );
  readonly #attempts = new GroupCommit<string, Outcome<undefined>>((b) =>
    isolated(b, async (sids) => {
      await this.db.query(
        sql`UPDATE sms_messages SET submit_attempted = true WHERE sid = ANY(${[...sids]}::text[]) AND NOT submit_attempted`,
      );
      return sids.map(() => undefined);
    }),
  );

  constructor(private readonly db: Db) {}

  insert(m: SmsMessage, claim?: { readonly node: string; readonly until: Date }): Promise<void> {
    return this.#inserts.add({ m, claim }).then(settle);
  }

  /** One multi-row INSERT for every message accepted while the previous batch was being written. */
  async #insertBatch(batch: readonly NewSms[]): Promise<undefined[]> {
    const rows = batch.map(
      ({
        m,
        claim,
      }) => sql`(${m.sid}, ${m.accountSid}, ${m.from}, ${m.to}, ${m.body}, ${m.status}, ${m.direction},
        ${m.channel}, ${m.price}, ${m.priceUnit}, ${m.apiVersion}, ${m.errorCode}, ${m.errorMessage},
        ${m.statusCallback}, ${m.destinationNetworkId}, ${m.segments}, ${m.possibleDuplicate}, ${claim?.node ?? null},
        ${claim?.until ?? null}, ${m.dateSent}, ${m.dateCreated}, ${m.dateUpdated})`,
    );
    await this.db.query(sql`
      INSERT INTO sms_messages (sid, account_sid, from_address, to_address, body, status, direction, channel,
        price, price_unit, api_version, error_code, error_message, status_callback, destination_network_id,
        segments, possible_duplicate, claimed_by, claimed_until, date_sent, date_created, date_updated)
      VALUES ${sql.join(rows, sql`, `)}
      ON CONFLICT (sid) DO NOTHING`);
    return batch.map(() => undefined);
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

  transition(t: SmsTransition): Promise<SmsMessage | null> {
    return this.#transitions.add(t).then(settle);
  }

  /**
   * Every status change requested while the previous batch was being written, in one statement:
   * each row changes only when its stored status is one of its `from` statuses, and the provider
   * ids of rows that changed are inserted in the same statement.
   */
  async #transitionBatch(batch: readonly SmsTransition[]): Promise<Array<SmsMessage | null>> {
    const values = batch.map(
      (
        t,
      ) => sql`(${t.sid}::text, ${t.to}::text, ${[...t.from]}::text[], ${t.errorCode !== undefined}::boolean,
        ${t.errorCode ?? null}::integer, ${t.errorMessage ?? null}::text, ${t.possibleDuplicate === true}::boolean,
        ${t.dateSent ?? null}::timestamptz, ${t.providerIds?.length ?? null}::integer)`,
    );
    const ids: string[] = [];
    const idSids: string[] = [];
    const segs: number[] = [];
    for (const t of batch) {
      (t.providerIds ?? []).forEach((id, i) => {
        ids.push(id);
        idSids.push(t.sid);
        segs.push(i);
      });
    }
    const rows = await this.db.query(sql`
      WITH v (sid, next, from_list, set_error, error_code, error_message, dup, date_sent, segments) AS (
        VALUES ${sql.join(values, sql`, `)}
      ),
      u AS (
        UPDATE sms_messages m SET
          status = v.next,
          error_code = CASE WHEN v.set_error THEN v.error_code ELSE m.error_code END,
          error_message = CASE WHEN v.set_error THEN v.error_message ELSE m.error_message END,
          possible_duplicate = m.possible_duplicate OR v.dup,
          date_sent = COALESCE(v.date_sent, m.date_sent),
          segments = COALESCE(v.segments, m.segments),
          -- A status other than queued/sending ends the resume lease: nobody needs to pick it up again.
          claimed_by = CASE WHEN v.next IN ('queued', 'sending') THEN m.claimed_by END,
          claimed_until = CASE WHEN v.next IN ('queued', 'sending') THEN m.claimed_until END,
          date_updated = now()
        FROM v
        WHERE m.sid = v.sid AND m.status = ANY(v.from_list)
        RETURNING m.*
      ),
      ids AS (
        INSERT INTO sms_provider_ids (provider_id, sms_sid, segment)
        SELECT p.id, p.sid, p.seg FROM unnest(${ids}::text[], ${idSids}::text[], ${segs}::int[]) AS p(id, sid, seg)
        JOIN u ON u.sid = p.sid
        ON CONFLICT (provider_id) DO UPDATE SET sms_sid = EXCLUDED.sms_sid, segment = EXCLUDED.segment
      )
      SELECT * FROM u`);
    const bySid = new Map(rows.map((r) => [r.sid as string, toMessage(r)]));
    return batch.map((t) => bySid.get(t.sid) ?? null);
  }

  async findByProviderId(providerId: string) {
    const rows = await this.db.query(sql`
      SELECT m.*, (SELECT array_agg(p2.provider_id ORDER BY p2.segment) FROM sms_provider_ids p2
                   WHERE p2.sms_sid = m.sid) AS provider_ids,
                  (SELECT json_object_agg(p3.provider_id, p3.outcome) FROM sms_provider_ids p3
                   WHERE p3.sms_sid = m.sid AND p3.outcome IS NOT NULL) AS outcomes
      FROM sms_provider_ids p JOIN sms_messages m ON m.sid = p.sms_sid
      WHERE p.provider_id = ${providerId}`);
    const row = rows[0];
    return row
      ? {
          message: toMessage(row),
          providerIds: (row.provider_ids as string[] | null) ?? [],
          outcomes: (row.outcomes as Record<string, SegmentOutcome> | null) ?? {},
        }
      : null;
  }

  markSubmitAttempted(sid: string): Promise<void> {
    return this.#attempts.add(sid).then(settle);
  }

  async recordSegmentOutcome(providerId: string, outcome: SegmentOutcome): Promise<void> {
    await this.db.query(
      sql`UPDATE sms_provider_ids SET outcome = ${outcome} WHERE provider_id = ${providerId}`,
    );
  }

  async claimPending(node: string, leaseMs: number, limit: number): Promise<SmsMessage[]> {
    const rows = await this.db.query(sql`
      UPDATE sms_messages SET claimed_by = ${node}, claimed_until = now() + ${`${leaseMs} milliseconds`}::interval
      WHERE sid IN (
        SELECT sid FROM sms_messages
        WHERE status IN ('queued', 'sending') AND channel = 'smpp'
          AND (claimed_until IS NULL OR claimed_until < now())
        ORDER BY date_created
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED)
      RETURNING *`);
    return rows.map(toMessage).sort((a, b) => a.dateCreated.getTime() - b.dateCreated.getTime());
  }

  async nextForeignLeaseEnd(node: string): Promise<Date | null> {
    const [row] = await this.db.query(sql`
      SELECT min(claimed_until) AS next FROM sms_messages
      WHERE status IN ('queued', 'sending') AND channel = 'smpp' AND claimed_until IS NOT NULL
        AND claimed_by IS DISTINCT FROM ${node}`);
    return (row?.next as Date | null | undefined) ?? null;
  }

  async renewClaims(node: string, leaseMs: number): Promise<void> {
    await this.db.query(sql`
      UPDATE sms_messages SET claimed_until = now() + ${`${leaseMs} milliseconds`}::interval
      WHERE claimed_by = ${node} AND status IN ('queued', 'sending')`);
  }

  async releaseClaims(node: string): Promise<void> {
    await this.db.query(
      sql`UPDATE sms_messages SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = ${node}`,
    );
  }
}
