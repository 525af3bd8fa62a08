/**
 * The SMS store's writes of one group commit in one statement: the inserts of accepted messages,
 * the submit attempts and the status transitions (with the provider ids of `sent`) that many
 * messages ask for at the same time go together as data-modifying CTEs, so a busy node makes one
 * round trip and one transaction where it made one per kind of write.
 *
 * A batch holds at most one write per message (GroupCommit `keyOf`): the sub-statements of one
 * statement see the same snapshot and one of them cannot see or change a row another writes. The
 * SMS service never needs that: each write of a message is asked for after the one before it
 * committed (the insert before the actor starts, the attempt before the submit_sm, the `sent`
 * transition before the receipt's).
 */
import type { SmsMessage, SmsStatusRecord, SmsTransition } from '../sms-store.js';
import { type Db, retryingDeadlocks, type SQLQuery, sql } from './db.js';
import { STATUS_RECORD_COLUMNS, toStatusRecord } from './sms-rows.js';

/** One write of an SMS message. */
export type SmsWrite =
  | {
      readonly kind: 'insert';
      readonly m: SmsMessage;
      readonly claim?: { readonly node: string; readonly until: Date } | undefined;
    }
  | { readonly kind: 'attempt'; readonly sid: string }
  | { readonly kind: 'transition'; readonly t: SmsTransition };

type InsertWrite = Extract<SmsWrite, { kind: 'insert' }>;

/** The message a write is for (one per batch). */
export function sidOfWrite(w: SmsWrite): string {
  switch (w.kind) {
    case 'insert':
      return w.m.sid;
    case 'attempt':
      return w.sid;
    case 'transition':
      return w.t.sid;
  }
}

/** A write's result: the changed message for a transition (null when its status was not in `from`). */
export type SmsWriteResult = SmsStatusRecord | null | undefined;

/** A timestamp as epoch milliseconds (an array of numbers costs the driver less than one of Dates). */
const ms = (d: Date | null | undefined): number | null => (d ? d.getTime() : null);

/**
 * The inserts as one array per column (`unnest`): the statement's text is the same for any number
 * of rows, so the driver formats 22 parameters rather than 22 per row.
 */
function insertCte(rows: ReadonlyArray<InsertWrite>): SQLQuery {
  const col = <V>(get: (w: InsertWrite) => V): V[] => rows.map(get);
  return sql`ins AS (
      INSERT INTO sms_messages (sid, account_sid, from_address, to_address, body, status, direction, channel,
        price, price_unit, api_version, error_code, error_message, status_callback, destination_network_id,
        segments, possible_duplicate, claimed_by, claimed_until, date_sent, date_created, date_updated)
      SELECT r.sid, r.account_sid, r.from_address, r.to_address, r.body, r.status, r.direction, r.channel,
        r.price, r.price_unit, r.api_version, r.error_code, r.error_message, r.status_callback,
        r.destination_network_id, r.segments, r.possible_duplicate, r.claimed_by,
        to_timestamp(r.claimed_until / 1000.0), to_timestamp(r.date_sent / 1000.0),
        to_timestamp(r.date_created / 1000.0), to_timestamp(r.date_updated / 1000.0)
      FROM unnest(${col((w) => w.m.sid)}::text[], ${col((w) => w.m.accountSid)}::text[],
        ${col((w) => w.m.from)}::text[], ${col((w) => w.m.to)}::text[], ${col((w) => w.m.body)}::text[],
        ${col((w) => w.m.status)}::text[], ${col((w) => w.m.direction)}::text[], ${col((w) => w.m.channel)}::text[],
        ${col((w) => w.m.price)}::numeric[], ${col((w) => w.m.priceUnit)}::text[],
        ${col((w) => w.m.apiVersion)}::text[], ${col((w) => w.m.errorCode)}::integer[],
        ${col((w) => w.m.errorMessage)}::text[], ${col((w) => w.m.statusCallback)}::text[],
        ${col((w) => w.m.destinationNetworkId)}::text[], ${col((w) => w.m.segments)}::integer[],
        ${col((w) => w.m.possibleDuplicate)}::boolean[], ${col((w) => w.claim?.node ?? null)}::text[],
        ${col((w) => ms(w.claim?.until))}::float8[], ${col((w) => ms(w.m.dateSent))}::float8[],
        ${col((w) => ms(w.m.dateCreated))}::float8[], ${col((w) => ms(w.m.dateUpdated))}::float8[])
        AS r(sid, account_sid, from_address, to_address, body, status, direction, channel, price, price_unit,
          api_version, error_code, error_message, status_callback, destination_network_id, segments,
          possible_duplicate, claimed_by, claimed_until, date_sent, date_created, date_updated)
      ON CONFLICT (sid) DO NOTHING)`;
}

function attemptCte(sids: readonly string[]): SQLQuery {
  return sql`att AS (
      UPDATE sms_messages SET submit_attempted = true
      WHERE sid = ANY(${[...sids]}::text[]) AND sid IN (SELECT sid FROM locked) AND NOT submit_attempted)`;
}

const RETURNED = sql.__dangerous__rawValue(STATUS_RECORD_COLUMNS);

/**
 * Each row changes only when its stored status is one of its `from` statuses; the provider ids of
 * rows that changed are inserted in the same statement. The changed rows come back as `u`, with only
 * the columns of their status callback (no timestamps to parse per row).
 */
function transitionCtes(batch: readonly SmsTransition[]): SQLQuery {
  const col = <V>(get: (t: SmsTransition) => V): V[] => batch.map(get);
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
  // One array per column, as for the inserts; `from` goes as a comma-separated list (an array of
  // arrays would be flattened by unnest; statuses hold no comma).
  return sql`v AS (
        SELECT r.sid, r.next, string_to_array(r.from_csv, ',') AS from_list, r.set_error, r.error_code,
          r.error_message, r.dup, to_timestamp(r.date_sent / 1000.0) AS date_sent, r.segments
        FROM unnest(${col((t) => t.sid)}::text[], ${col((t) => t.to)}::text[],
          ${col((t) => t.from.join(','))}::text[], ${col((t) => t.errorCode !== undefined)}::boolean[],
          ${col((t) => t.errorCode ?? null)}::integer[], ${col((t) => t.errorMessage ?? null)}::text[],
          ${col((t) => t.possibleDuplicate === true)}::boolean[], ${col((t) => ms(t.dateSent))}::float8[],
          ${col((t) => t.providerIds?.length ?? null)}::integer[])
          AS r(sid, next, from_csv, set_error, error_code, error_message, dup, date_sent, segments)
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
        WHERE m.sid = v.sid AND m.sid IN (SELECT sid FROM locked) AND m.status = ANY(v.from_list)
        RETURNING ${RETURNED}
      ),
      ids AS (
        INSERT INTO sms_provider_ids (provider_id, sms_sid, segment)
        SELECT p.id, p.sid, p.seg FROM unnest(${ids}::text[], ${idSids}::text[], ${segs}::int[]) AS p(id, sid, seg)
        JOIN u ON u.sid = p.sid
        ON CONFLICT (provider_id) DO UPDATE SET sms_sid = EXCLUDED.sms_sid, segment = EXCLUDED.segment
      )`;
}

/** Writes a batch (at most one write per message) in one statement; results in the batch's order. */
export async function writeSmsBatch(db: Db, batch: readonly SmsWrite[]): Promise<SmsWriteResult[]> {
  const inserts: Array<InsertWrite> = [];
  const attempts: string[] = [];
  const transitions: SmsTransition[] = [];
  for (const w of batch) {
    if (w.kind === 'insert') inserts.push(w);
    else if (w.kind === 'attempt') attempts.push(w.sid);
    else transitions.push(w.t);
  }
  const ctes: SQLQuery[] = [];
  // Existing rows are locked in sid order first, as the claim renewal locks them: two writers that
  // take the same rows in different orders deadlock.
  const existing = [...attempts, ...transitions.map((t) => t.sid)].sort();
  if (existing.length > 0) {
    ctes.push(sql`locked AS (
      SELECT sid FROM sms_messages WHERE sid = ANY(${existing}::text[]) ORDER BY sid FOR UPDATE)`);
  }
  if (inserts.length > 0) ctes.push(insertCte(inserts));
  if (attempts.length > 0) ctes.push(attemptCte(attempts));
  if (transitions.length > 0) ctes.push(transitionCtes(transitions));
  // Data-modifying CTEs run whether or not the main query reads them.
  const main = transitions.length > 0 ? sql`SELECT * FROM u` : sql`SELECT 1 AS done`;
  const statement = sql`WITH ${sql.join(ctes, sql`, `)} ${main}`;
  const rows = await retryingDeadlocks(() => db.query(statement));
  const bySid = new Map<string, SmsStatusRecord>();
  if (transitions.length > 0) for (const r of rows) bySid.set(r.sid as string, toStatusRecord(r));
  return batch.map((w) => (w.kind === 'transition' ? (bySid.get(w.t.sid) ?? null) : undefined));
}
