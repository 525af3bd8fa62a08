/**
 * Client DTO (spec §Client). The password is never stored, so it is shown masked (see
 * docs/decisions.md): representations must not echo secrets.
 */
import { rfc2822 } from '../../dates.js';
import type { Client } from '../../store/client-store.js';
import type { Dto, Format } from '../render.js';
import { accountPath, uriOf } from '../uris.js';

export const MASKED_PASSWORD = '********';

export function clientDto(c: Client, format: Format): Dto {
  return {
    Sid: c.sid,
    DateCreated: rfc2822(c.dateCreated),
    DateUpdated: rfc2822(c.dateUpdated),
    AccountSid: c.accountSid,
    ApiVersion: c.apiVersion,
    FriendlyName: c.friendlyName,
    Login: c.login,
    Password: MASKED_PASSWORD,
    Status: c.status,
    VoiceUrl: c.voiceUrl,
    VoiceMethod: c.voiceMethod,
    VoiceFallbackUrl: c.voiceFallbackUrl,
    VoiceFallbackMethod: c.voiceFallbackMethod,
    VoiceApplicationSid: c.voiceApplicationSid,
    Uri: uriOf(format, `${accountPath(c.accountSid)}/Clients/${c.sid}`),
  };
}
