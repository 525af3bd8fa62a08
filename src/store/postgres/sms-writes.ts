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
import type { SmsMessage, SmsTransition } from '../sms-store.js';
import { type Db, retryingDeadlocks, type SQLQuery, sql } from './db.js';
import { toMessage } from './sms-rows.js';

/** One write of an SMS message. */
export type SmsWrite =
  | {
      readonly kind: 'insert';
      readonly m: SmsMessage;
      readonly claim?: { readonly node: string; readonly until: Date } | undefined;
    }
  | { readonly kind: 'attempt'; readonly sid: string }
  | { readonly kind: 'transition'; readonly t: SmsTransition };

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
export type SmsWriteResult = SmsMessage | null | undefined;

function insertCte(rows: ReadonlyArray<Extract<SmsWrite, { kind: 'insert' }>>): SQLQuery {
  const values = rows.map(
    ({
      m,
      claim,
    }) => sql`(${m.sid}, ${m.accountSid}, ${m.from}, ${m.to}, ${m.body}, ${m.status}, ${m.direction},
        ${m.channel}, ${m.price}, ${m.priceUnit}, ${m.apiVersion}, ${m.errorCode}, ${m.errorMessage},
        ${m.statusCallback}, ${m.destinationNetworkId}, ${m.segments}, ${m.possibleDuplicate}, ${claim?.node ?? null},
        ${claim?.until ?? null}, ${m.dateSent}, ${m.dateCreated}, ${m.dateUpdated})`,
  );
  return sql`ins AS (
      INSERT INTO sms_messages (sid, account_sid, from_address, to_address, body, status, direction, channel,
        price, price_unit, api_version, error_code, error_message, status_callback, destination_network_id,
        segments, possible_duplicate, claimed_by, claimed_until, date_sent, date_created, date_updated)
      VALUES ${sql.join(values, sql`, `)}
      ON CONFLICT (sid) DO NOTHING)`;
}

function attemptCte(sids: readonly string[]): SQLQuery {
  return sql`att AS (
      UPDATE sms_messages SET submit_attempted = true
      WHERE sid = ANY(${[...sids]}::text[]) AND sid IN (SELECT sid FROM locked) AND NOT submit_attempted)`;
}

/**
 * Each row changes only when its stored status is one of its `from` statuses; the provider ids of
 * rows that changed are inserted in the same statement. The changed rows come back as `u`.
 */
function transitionCtes(batch: readonly SmsTransition[]): SQLQuery {
  const values = batch.map(
    (t) => sql`(${t.sid}::text, ${t.to}::text, ${[...t.from]}::text[], ${t.errorCode !== undefined}::boolean,
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
  return sql`v (sid, next, from_list, set_error, error_code, error_message, dup, date_sent, segments) AS (
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
        WHERE m.sid = v.sid AND m.sid IN (SELECT sid FROM locked) AND m.status = ANY(v.from_list)
        RETURNING m.*
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
  const inserts: Array<Extract<SmsWrite, { kind: 'insert' }>> = [];
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
  const bySid = new Map<string, SmsMessage>();
  if (transitions.length > 0) for (const r of rows) bySid.set(r.sid as string, toMessage(r));
  return batch.map((w) => (w.kind === 'transition' ? (bySid.get(w.t.sid) ?? null) : undefined));
}
