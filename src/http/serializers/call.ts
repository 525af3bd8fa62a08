/** Call DTO (spec §Call). */
import { rfc2822, rfc2822OrNull } from '../../dates.js';
import type { CallRecord } from '../../store/call-store.js';
import type { Dto, Format } from '../render.js';
import { accountPath, uriOf } from '../uris.js';

export function callDto(c: CallRecord, format: Format, extra: Dto = {}): Dto {
  const base = `${accountPath(c.accountSid)}/Calls/${c.sid}`;
  return {
    Sid: c.sid,
    DateCreated: rfc2822(c.dateCreated),
    DateUpdated: rfc2822(c.dateUpdated),
    ParentCallSid: c.parentCallSid,
    AccountSid: c.accountSid,
    To: c.to,
    From: c.from,
    PhoneNumberSid: c.phoneNumberSid,
    Status: c.status,
    StartTime: rfc2822OrNull(c.startTime),
    EndTime: rfc2822OrNull(c.endTime),
    Duration: c.duration,
    Price: c.price === null ? null : c.price.toFixed(4),
    PriceUnit: c.priceUnit,
    Direction: c.direction,
    AnsweredBy: c.answeredBy,
    ApiVersion: c.apiVersion,
    ForwardedFrom: c.forwardedFrom,
    CallerName: c.callerName,
    SipResponseCode: c.sipResponseCode,
    Uri: uriOf(format, base),
    ...extra,
    SubresourceUris: {
      Notifications: uriOf(format, `${base}/Notifications`),
      Recordings: uriOf(format, `${base}/Recordings`),
    },
  };
}
