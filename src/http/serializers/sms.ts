/** SMS message and Email message DTOs (spec §SMS message, §Email message). */
import { rfc2822, rfc2822OrNull } from '../../dates.js';
import type { SmsMessage } from '../../store/sms-store.js';
import type { Dto, Format } from '../render.js';
import { accountPath, uriOf } from '../uris.js';

/**
 * `withBody` false for a ProvisioningAgent (spec §Authentication 4: may not read message text);
 * the member is then null.
 */
export function smsDto(m: SmsMessage, format: Format, withBody = true): Dto {
  return {
    Sid: m.sid,
    DateCreated: rfc2822(m.dateCreated),
    DateUpdated: rfc2822(m.dateUpdated),
    DateSent: rfc2822OrNull(m.dateSent),
    AccountSid: m.accountSid,
    From: m.from,
    To: m.to,
    Body: withBody ? m.body : null,
    Status: m.status,
    Direction: m.direction,
    Price: m.price,
    PriceUnit: m.priceUnit,
    ApiVersion: m.apiVersion,
    Uri: uriOf(format, `${accountPath(m.accountSid)}/SMS/Messages/${m.sid}`),
    ErrorCode: m.errorCode === null ? null : String(m.errorCode),
    ErrorMessage: m.errorMessage,
  };
}

/** What `POST /Email/Messages` answers (spec §Email message). */
export interface EmailMessageView {
  readonly dateSent: Date;
  readonly accountSid: string;
  readonly from: string;
  readonly to: string;
  readonly body: string;
  readonly subject: string;
}

/** The Email message representation. */
export function emailDto(e: EmailMessageView): Dto {
  return {
    DateSent: rfc2822(e.dateSent),
    AccountSid: e.accountSid,
    From: e.from,
    To: e.to,
    Body: e.body,
    Subject: e.subject,
  };
}
