/** Postgres implementation of the NumberStore port. */
import type { IncomingNumber, NumberFilter, NumberPatch, NumberStore } from '../number-store.js';
import { type Db, sql } from './db.js';
import { updateSet } from './sql-helpers.js';

type Row = Record<string, unknown>;

/** Domain member → column, for every settable member. */
const COLUMNS: Record<keyof NumberPatch, string> = {
  accountSid: 'account_sid',
  friendlyName: 'friendly_name',
  apiVersion: 'api_version',
  voiceCallerIdLookup: 'voice_caller_id_lookup',
  voiceUrl: 'voice_url',
  voiceMethod: 'voice_method',
  voiceFallbackUrl: 'voice_fallback_url',
  voiceFallbackMethod: 'voice_fallback_method',
  statusCallback: 'status_callback',
  statusCallbackMethod: 'status_callback_method',
  voiceApplicationSid: 'voice_application_sid',
  smsUrl: 'sms_url',
  smsMethod: 'sms_method',
  smsFallbackUrl: 'sms_fallback_url',
  smsFallbackMethod: 'sms_fallback_method',
  smsApplicationSid: 'sms_application_sid',
  ussdUrl: 'ussd_url',
  ussdMethod: 'ussd_method',
  ussdFallbackUrl: 'ussd_fallback_url',
  ussdFallbackMethod: 'ussd_fallback_method',
  ussdApplicationSid: 'ussd_application_sid',
  referUrl: 'refer_url',
  referMethod: 'refer_method',
  referApplicationSid: 'refer_application_sid',
  voiceCapable: 'voice_capable',
  smsCapable: 'sms_capable',
  mmsCapable: 'mms_capable',
  faxCapable: 'fax_capable',
};

const ALL_COLUMNS: Record<keyof IncomingNumber, string> = {
  ...COLUMNS,
  sid: 'sid',
  phoneNumber: 'phone_number',
  numberType: 'number_type',
  dateCreated: 'date_created',
  dateUpdated: 'date_updated',
};

function toNumber(r: Row): IncomingNumber {
  const out: Record<string, unknown> = {};
  for (const [member, column] of Object.entries(ALL_COLUMNS)) out[member] = r[column] ?? null;
  return out as unknown as IncomingNumber;
}

export class PgNumberStore implements NumberStore {
  constructor(private readonly db: Db) {}

  async insert(n: IncomingNumber): Promise<boolean> {
    const entries = Object.entries(ALL_COLUMNS);
    const rows = await this.db.query(sql`
      INSERT INTO incoming_numbers (${sql.join(
        entries.map(([, c]) => sql.ident(c)),
        sql`, `,
      )})
      VALUES (${sql.join(
        entries.map(([m]) => sql`${(n as unknown as Record<string, unknown>)[m]}`),
        sql`, `,
      )})
      ON CONFLICT (phone_number) DO NOTHING RETURNING sid`);
    return rows.length > 0;
  }

  async get(accountSid: string, sid: string): Promise<IncomingNumber | null> {
    const [row] = await this.db.query(
      sql`SELECT * FROM incoming_numbers WHERE sid = ${sid} AND account_sid = ${accountSid}`,
    );
    return row ? toNumber(row) : null;
  }

  async list(f: NumberFilter): Promise<IncomingNumber[]> {
    const where = [sql`account_sid = ${f.accountSid}`];
    if (f.phoneNumber !== undefined) {
      const pattern = f.phoneNumber.replace(/[%_\\]/g, '\\$&').replace(/\*/g, '_');
      where.push(sql`phone_number LIKE ${`%${pattern}%`}`);
    }
    if (f.friendlyName !== undefined) where.push(sql`friendly_name = ${f.friendlyName}`);
    if (f.numberType !== undefined) where.push(sql`number_type = ${f.numberType}`);
    const rows = await this.db.query(
      sql`SELECT * FROM incoming_numbers WHERE ${sql.join(where, sql` AND `)} ORDER BY date_created, sid`,
    );
    return rows.map(toNumber);
  }

  async update(accountSid: string, sid: string, patch: NumberPatch): Promise<IncomingNumber | null> {
    const [row] = await this.db.query(
      sql`UPDATE incoming_numbers SET ${updateSet(patch, COLUMNS)} WHERE sid = ${sid} AND account_sid = ${accountSid} RETURNING *`,
    );
    return row ? toNumber(row) : null;
  }

  async delete(accountSid: string, sid: string): Promise<IncomingNumber | null> {
    const [row] = await this.db.query(
      sql`DELETE FROM incoming_numbers WHERE sid = ${sid} AND account_sid = ${accountSid} RETURNING *`,
    );
    return row ? toNumber(row) : null;
  }

  async deleteAllOf(accountSid: string): Promise<void> {
    await this.db.query(sql`DELETE FROM incoming_numbers WHERE account_sid = ${accountSid}`);
  }

  async isTaken(e164: string): Promise<boolean> {
    return (await this.db.query(sql`SELECT 1 FROM incoming_numbers WHERE phone_number = ${e164}`)).length > 0;
  }

  async takenAmong(e164s: readonly string[]): Promise<Set<string>> {
    if (e164s.length === 0) return new Set();
    const rows = await this.db.query(
      sql`SELECT phone_number FROM incoming_numbers WHERE phone_number = ANY(${[...e164s]})`,
    );
    return new Set(rows.map((r) => r.phone_number as string));
  }

  async findByNumber(e164: string): Promise<IncomingNumber | null> {
    const [row] = await this.db.query(sql`SELECT * FROM incoming_numbers WHERE phone_number = ${e164}`);
    return row ? toNumber(row) : null;
  }
}
