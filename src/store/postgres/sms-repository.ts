/** Postgres implementation of the SmsStore port (migration 0010_sms_email.sql). */
import type {
  SegmentOutcome,
  SmsFilter,
  SmsMessage,
  SmsSort,
  SmsStatusRecord,
  SmsStore,
  SmsTransition,
} from '../sms-store.js';
import { type Db, retryingDeadlocks, sql } from './db.js';
import { GroupCommit } from './group-commit.js';
import { toMessage } from './sms-rows.js';
import { type SmsWrite, type SmsWriteResult, sidOfWrite, writeSmsBatch } from './sms-writes.js';
import { orderBy } from './sql-helpers.js';

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

/**
 * Postgres SmsStore. Inserts, submit attempts and status transitions are group-committed together
 * (see GroupCommit and sms-writes.ts): what many messages ask for while the previous batch is being
 * written goes in one statement, whatever its kind, and each caller's promise settles only once its batch has committed, so an accepted
 * message is in Postgres before the API answers and `submit_attempted` is before the submit_sm.
 */
export class PgSmsStore implements SmsStore {
  /** Inserts, submit attempts and transitions of many messages in one statement (sms-writes.ts). */
  readonly #writes = new GroupCommit<SmsWrite, Outcome<SmsWriteResult>>(
    (b) => isolated(b, (rows) => writeSmsBatch(this.db, rows)),
    2,
    500,
    sidOfWrite,
  );

  constructor(private readonly db: Db) {}

  async insert(m: SmsMessage, claim?: { readonly node: string; readonly until: Date }): Promise<void> {
    settle(await this.#writes.add({ kind: 'insert', m, claim }));
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

  async transition(t: SmsTransition): Promise<SmsStatusRecord | null> {
    return settle(await this.#writes.add({ kind: 'transition', t })) ?? null;
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

  async markSubmitAttempted(sid: string): Promise<void> {
    settle(await this.#writes.add({ kind: 'attempt', sid }));
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
    // Rows locked in sid order, as the batched writes lock them (no deadlock between the two); the
    // locking read re-checks its condition on a row changed meanwhile, so `locked` is the set to renew.
    await retryingDeadlocks(() =>
      this.db.query(sql`
        WITH locked AS (
          SELECT sid FROM sms_messages
          WHERE claimed_by = ${node} AND status IN ('queued', 'sending')
          ORDER BY sid FOR UPDATE)
        UPDATE sms_messages SET claimed_until = now() + ${`${leaseMs} milliseconds`}::interval
        WHERE sid IN (SELECT sid FROM locked)`),
    );
  }

  async releaseClaims(node: string): Promise<void> {
    await this.db.query(
      sql`UPDATE sms_messages SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = ${node}`,
    );
  }
}
