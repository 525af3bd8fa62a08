/** OutgoingCallerId DTO (Twilio's and Restcomm's members). */
import { rfc2822 } from '../../dates.js';
import type { OutgoingCallerId } from '../../store/caller-id-store.js';
import type { Dto, Format } from '../render.js';
import { accountPath, uriOf } from '../uris.js';

export function outgoingCallerIdDto(c: OutgoingCallerId, format: Format): Dto {
  return {
    Sid: c.sid,
    AccountSid: c.accountSid,
    FriendlyName: c.friendlyName,
    PhoneNumber: c.phoneNumber,
    DateCreated: rfc2822(c.dateCreated),
    DateUpdated: rfc2822(c.dateUpdated),
    Uri: uriOf(format, `${accountPath(c.accountSid)}/OutgoingCallerIds/${c.sid}`),
  };
}
