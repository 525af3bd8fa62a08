/** Rows of `sms_messages` as domain records. */
import type { SmsMessage, SmsStatusRecord } from '../sms-store.js';

type Row = Record<string, unknown>;

/** The columns of a `SmsStatusRecord`, for a RETURNING list (`m` the row's alias). */
export const STATUS_RECORD_COLUMNS =
  'm.sid, m.account_sid, m.from_address, m.to_address, m.body, m.status, m.api_version, m.error_code, m.status_callback';

/** A row of STATUS_RECORD_COLUMNS as the record. */
export const toStatusRecord = (r: Row): SmsStatusRecord => ({
  sid: r.sid as string,
  accountSid: r.account_sid as string,
  from: r.from_address as string,
  to: r.to_address as string,
  body: r.body as string,
  status: r.status as SmsMessage['status'],
  apiVersion: r.api_version as string,
  errorCode: r.error_code === null ? null : Number(r.error_code),
  statusCallback: (r.status_callback as string | null) ?? null,
});

/** A row of `sms_messages` (every column) as the message it records. */
export const toMessage = (r: Row): SmsMessage => ({
  ...toStatusRecord(r),
  direction: r.direction as SmsMessage['direction'],
  channel: r.channel as SmsMessage['channel'],
  price: r.price === null || r.price === undefined ? null : String(r.price),
  priceUnit: r.price_unit as string,
  errorMessage: (r.error_message as string | null) ?? null,
  destinationNetworkId: (r.destination_network_id as string | null) ?? null,
  segments: Number(r.segments),
  possibleDuplicate: Boolean(r.possible_duplicate),
  submitAttempted: Boolean(r.submit_attempted),
  dateSent: (r.date_sent as Date | null) ?? null,
  dateCreated: r.date_created as Date,
  dateUpdated: r.date_updated as Date,
});
