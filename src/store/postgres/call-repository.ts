/** Postgres implementation of the CallStore port. */
import type {
  CallClaim,
  CallFilter,
  CallPage,
  CallProgress,
  CallRecord,
  CallStore,
  CallUpdate,
  OrphanCall,
  StoredStatusCallback,
} from '../call-store.js';
import { type Db, retryingDeadlocks, sql } from './db.js';
import { GroupCommit } from './group-commit.js';
import { updateSet } from './sql-helpers.js';

type Row = Record<string, unknown>;

const toCall = (r: Row): CallRecord => ({
  sid: r.sid as string,
  parentCallSid: (r.parent_call_sid as string | null) ?? null,
  accountSid: r.account_sid as string,
  to: r.to_address as string,
  from: r.from_address as string,
  phoneNumberSid: (r.phone_number_sid as string | null) ?? null,
  status: r.status as CallRecord['status'],
  startTime: asDate(r.start_time),
  endTime: asDate(r.end_time),
  duration: (r.duration as number | null) ?? null,
  price: r.price === null || r.price === undefined ? null : Number(r.price),
  priceUnit: r.price_unit as string,
  direction: r.direction as CallRecord['direction'],
  answeredBy: (r.answered_by as string | null) ?? null,
  apiVersion: r.api_version as string,
  forwardedFrom: (r.forwarded_from as string | null) ?? null,
  callerName: (r.caller_name as string | null) ?? null,
  sipCallId: (r.sip_call_id as string | null) ?? null,
  sipResponseCode: (r.sip_response_code as number | null) ?? null,
  dateCreated: asDate(r.date_created) as Date,
  dateUpdated: asDate(r.date_updated) as Date,
});

/** A timestamptz column as read (a Date) or as selected in epoch milliseconds (LIST_COLUMNS). */
function asDate(v: unknown): Date | null {
  if (v === null || v === undefined) return null;
  return typeof v === 'number' ? new Date(v) : (v as Date);
}

const COLUMNS: Record<keyof CallUpdate, string> = {
  status: 'status',
  startTime: 'start_time',
  endTime: 'end_time',
  duration: 'duration',
  price: 'price',
  answeredBy: 'answered_by',
  sipCallId: 'sip_call_id',
  sipResponseCode: 'sip_response_code',
  to: 'to_address',
  from: 'from_address',
};

/**
 * What the REST list shows of a call (toCall's columns; the claim and callback stay unread). Times
 * come as epoch milliseconds (truncated, as the driver's Date parsing truncates microseconds): a
 * page of 50 has up to 200 of them, and parsing Postgres's text form into Dates was a tenth of the
 * list's CPU.
 */
const LIST_COLUMNS = sql.__dangerous__rawValue(
  'sid, parent_call_sid, account_sid, to_address, from_address, phone_number_sid, status, ' +
    `${epochMs('start_time')}, ${epochMs('end_time')}, duration, price, price_unit, direction, ` +
    'answered_by, api_version, forwarded_from, caller_name, sip_call_id, sip_response_code, ' +
    `${epochMs('date_created')}, ${epochMs('date_updated')}, ` +
    // The exact creation instant (numeric, microseconds; read as text) keeps the page's order.
    // (Order by `calls.date_created`: the bare name would be the millisecond output column.)
    'extract(epoch FROM date_created) AS list_order',
);

function epochMs(column: string): string {
  return `floor(extract(epoch FROM ${column}) * 1000)::float8 AS ${column}`;
}

/** A call record to insert, with its claim and the StatusCallback kept for its recovery. */
interface NewCall {
  readonly c: CallRecord;
  readonly opts: { claim?: CallClaim; statusCallback?: StoredStatusCallback | null };
}

/** How long a progress update waits for others to share its statement (ms). */
const PATCH_LINGER_MS = 10;

export class PgCallStore implements CallStore {
  constructor(private readonly db: Db) {}

  readonly #inserts = new GroupCommit<NewCall, unknown>((batch) => this.#insertBatch(batch));

  /** Calls created while the previous batch was being written go in one multi-row INSERT. */
  async insert(
    c: CallRecord,
    opts: { claim?: CallClaim; statusCallback?: StoredStatusCallback | null } = {},
  ): Promise<void> {
    const failure = await this.#inserts.add({ c, opts });
    if (failure !== undefined) throw failure;
  }

  /** Per row: undefined when written, else why not (a batch that fails is retried row by row). */
  async #insertBatch(batch: readonly NewCall[]): Promise<unknown[]> {
    try {
      await this.#insertRows(batch);
      return batch.map(() => undefined);
    } catch (err) {
      if (batch.length === 1) return [err];
      // One bad row (text the store refuses) must not fail the calls written with it.
      return Promise.all(
        batch.map((row) =>
          this.#insertRows([row]).then(
            () => undefined,
            (e: unknown) => e,
          ),
        ),
      );
    }
  }

  async #insertRows(batch: readonly NewCall[]): Promise<void> {
    const rows = batch.map(({ c, opts }) => {
      // Records written without a claim (imports, tests) are terminal or nobody's: a live one is an orphan.
      const { claim, statusCallback: cb } = opts;
      const until = claim ? sql`now() + ${`${claim.leaseMs} milliseconds`}::interval` : sql`NULL`;
      return sql`(${c.sid}, ${c.parentCallSid}, ${c.accountSid}, ${c.to}, ${c.from}, ${c.phoneNumberSid}, ${c.status},
        ${c.startTime}, ${c.endTime}, ${c.duration}, ${c.price}, ${c.priceUnit}, ${c.direction}, ${c.answeredBy},
        ${c.apiVersion}, ${c.forwardedFrom}, ${c.callerName}, ${c.sipCallId}, ${c.sipResponseCode}, ${c.dateCreated}, ${c.dateUpdated},
        ${claim?.node ?? null}, ${until}, ${cb?.url ?? null}, ${cb?.method ?? null}, ${cb ? [...cb.events] : null})`;
    });
    await this.db.query(sql`
      INSERT INTO calls (sid, parent_call_sid, account_sid, to_address, from_address, phone_number_sid, status,
        start_time, end_time, duration, price, price_unit, direction, answered_by, api_version, forwarded_from,
        caller_name, sip_call_id, sip_response_code, date_created, date_updated, claimed_by, claimed_until,
        status_callback, status_callback_method, status_callback_events)
      VALUES ${sql.join(rows, sql`, `)}
      ON CONFLICT (sid) DO NOTHING`);
  }

  async claimOrphans(node: string, leaseMs: number, limit: number): Promise<OrphanCall[]> {
    const rows = await this.db.query(sql`
      UPDATE calls SET claimed_by = ${node}, claimed_until = now() + ${`${leaseMs} milliseconds`}::interval
      WHERE sid IN (
        SELECT sid FROM calls
        WHERE status IN ('queued', 'ringing', 'in-progress')
          AND (claimed_until IS NULL OR claimed_until < now())
        ORDER BY date_created
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED)
      RETURNING *`);
    return rows.map((row) => ({
      record: toCall(row),
      statusCallback: row.status_callback
        ? {
            url: row.status_callback as string,
            method: row.status_callback_method === 'GET' ? 'GET' : 'POST',
            events: (row.status_callback_events as string[] | null) ?? [],
          }
        : null,
    }));
  }

  async renewClaims(node: string, leaseMs: number): Promise<void> {
    await this.db.query(sql`
      UPDATE calls SET claimed_until = now() + ${`${leaseMs} milliseconds`}::interval
      WHERE sid IN (
        SELECT sid FROM calls WHERE claimed_by = ${node} AND status IN ('queued', 'ringing', 'in-progress')
        ORDER BY sid FOR UPDATE
      )`);
  }

  async ownerOf(sid: string): Promise<{ node: string; current: boolean } | null> {
    const [row] = await this.db.query(sql`
      SELECT claimed_by, claimed_until > now() AS current FROM calls
      WHERE sid = ${sid} AND claimed_by IS NOT NULL AND status IN ('queued', 'ringing', 'in-progress')`);
    return row ? { node: row.claimed_by as string, current: row.current === true } : null;
  }

  async releaseClaims(node: string): Promise<void> {
    await this.db.query(
      sql`UPDATE calls SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = ${node} AND status IN ('queued', 'ringing', 'in-progress')`,
    );
  }

  async update(sid: string, patch: CallUpdate): Promise<CallRecord | null> {
    const [row] = await this.db.query(
      sql`UPDATE calls SET ${updateSet(patch, COLUMNS)} WHERE sid = ${sid} RETURNING *`,
    );
    return row ? toCall(row) : null;
  }

  // One batch at a time: two would lock overlapping rows in no set order. A call's second patch
  // waits for the next batch (one UPDATE … FROM applies only one of two rows for the same call).
  // Progress waits up to PATCH_LINGER_MS for other calls' progress (every call's in one statement
  // instead of one each; only its callbacks wait for it, not the call).
  readonly #patches = new GroupCommit<{ sid: string; patch: CallProgress }, undefined>(
    (batch) => this.#patchBatch(batch),
    1,
    500,
    (p) => p.sid,
    PATCH_LINGER_MS,
  );

  patch(sid: string, patch: CallProgress): Promise<void> {
    return this.#patches.add({ sid, patch });
  }

  /** One UPDATE for every call whose progress changed while the previous batch was written. */
  async #patchBatch(batch: ReadonlyArray<{ sid: string; patch: CallProgress }>): Promise<undefined[]> {
    const values = batch.map(
      ({ sid, patch: p }) =>
        sql`(${sid}::text, ${p.status ?? null}::text, ${p.startTime ?? null}::timestamptz,
          ${p.endTime ?? null}::timestamptz, ${p.duration ?? null}::integer,
          ${p.sipResponseCode !== undefined}::boolean, ${p.sipResponseCode ?? null}::integer)`,
    );
    // Rows are locked in sid order, as renewClaims locks them, so the two never deadlock; a
    // deadlock with any other writer is retried (Postgres rolled back only this statement).
    const statement = sql`
      WITH v (sid, status, start_time, end_time, duration, set_sip, sip) AS (VALUES ${sql.join(values, sql`, `)}),
      locked AS (SELECT c.sid FROM calls c JOIN v ON v.sid = c.sid ORDER BY c.sid FOR UPDATE)
      UPDATE calls c SET
        status = COALESCE(v.status, c.status),
        start_time = COALESCE(v.start_time, c.start_time),
        end_time = COALESCE(v.end_time, c.end_time),
        duration = COALESCE(v.duration, c.duration),
        sip_response_code = CASE WHEN v.set_sip THEN v.sip ELSE c.sip_response_code END,
        date_updated = now()
      FROM v
      WHERE c.sid = v.sid AND c.sid IN (SELECT sid FROM locked)`;
    await retryingDeadlocks(() => this.db.query(statement));
    return batch.map(() => undefined);
  }

  async get(accountSid: string, sid: string): Promise<CallRecord | null> {
    const [row] = await this.db.query(
      sql`SELECT * FROM calls WHERE sid = ${sid} AND account_sid = ${accountSid}`,
    );
    return row ? toCall(row) : null;
  }

  /**
   * One page, newest first, with the exact total and the account's list version in the same
   * statement (so the three agree; a page past the end still answers the total). Without filters
   * other than the account the total is the account's kept count (migration 0019), not a count of
   * its rows.
   */
  async list(f: CallFilter, page: { offset: number; limit: number }): Promise<CallPage> {
    const where = [sql`account_sid = ${f.accountSid}`];
    if (f.to !== undefined) where.push(sql`to_address = ${f.to}`);
    if (f.from !== undefined) where.push(sql`from_address = ${f.from}`);
    if (f.status !== undefined) where.push(sql`status = ${f.status}`);
    if (f.startTimeFrom !== undefined) where.push(sql`start_time >= ${f.startTimeFrom}`);
    if (f.startTimeTo !== undefined) where.push(sql`start_time <= ${f.startTimeTo}`);
    if (f.parentCallSid !== undefined) where.push(sql`parent_call_sid = ${f.parentCallSid}`);
    const cond = sql.join(where, sql` AND `);
    const total =
      where.length === 1 ? sql`COALESCE(k.n, 0)` : sql`(SELECT count(*) FROM calls WHERE ${cond})`;
    const rows = await this.db.query(
      sql`SELECT ${total}::int AS list_total, COALESCE(k.v, 0) AS list_version, p.*
        FROM (SELECT 1) one
        LEFT JOIN call_counts k ON k.account_sid = ${f.accountSid}
        LEFT JOIN LATERAL (
          SELECT ${LIST_COLUMNS} FROM calls WHERE ${cond}
          ORDER BY calls.date_created DESC, calls.sid DESC LIMIT ${page.limit} OFFSET ${page.offset}
        ) p ON true
        ORDER BY p.list_order DESC, p.sid DESC`,
    );
    const first = rows[0];
    return {
      total: (first?.list_total as number | undefined) ?? 0,
      version: Number(first?.list_version ?? 0),
      // Past the last page (or no calls) the one row carries the total and no call.
      items: first?.sid == null ? [] : rows.map(toCall),
    };
  }

  /**
   * Reads asked for while earlier ones are under way go together in the next statement (a busy
   * list asks for the same account's version many times at once); each statement is sent after
   * the reads it answers were asked for, so none misses a write committed before it was asked.
   */
  readonly #versions = new GroupCommit<string, number>((sids) => this.#versionBatch(sids));

  listVersion(accountSid: string): Promise<number> {
    return this.#versions.add(accountSid);
  }

  async #versionBatch(sids: readonly string[]): Promise<number[]> {
    const distinct = [...new Set(sids)];
    const rows = await this.db.query(
      sql`SELECT account_sid, v FROM call_counts WHERE account_sid = ANY(${distinct}::text[])`,
    );
    const found = new Map(rows.map((r) => [r.account_sid as string, Number(r.v)]));
    return sids.map((sid) => found.get(sid) ?? 0);
  }
}
