/** Application DTO (spec §Application): the lookup flag is shown as VoiceCallerIdLookup. */
import { rfc2822 } from '../../dates.js';
import type { Application } from '../../store/application-store.js';
import type { Dto, Format } from '../render.js';
import { accountPath, uriOf } from '../uris.js';

export function applicationDto(a: Application, format: Format): Dto {
  return {
    Sid: a.sid,
    DateCreated: rfc2822(a.dateCreated),
    DateUpdated: rfc2822(a.dateUpdated),
    FriendlyName: a.friendlyName,
    AccountSid: a.accountSid,
    ApiVersion: a.apiVersion,
    VoiceCallerIdLookup: a.voiceCallerIdLookup,
    Uri: uriOf(format, `${accountPath(a.accountSid)}/Applications/${a.sid}`),
    RcmlUrl: a.rcmlUrl,
    Kind: a.kind,
  };
}
