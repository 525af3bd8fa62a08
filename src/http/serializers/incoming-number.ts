/** Incoming phone number DTO (spec §Incoming phone number); application sids carry their names. */
import { rfc2822 } from '../../dates.js';
import type { IncomingNumber } from '../../store/number-store.js';
import type { Dto, Format } from '../render.js';
import { accountPath, uriOf } from '../uris.js';

export function incomingNumberDto(
  n: IncomingNumber,
  format: Format,
  appNames: ReadonlyMap<string, string>,
): Dto {
  const name = (sid: string | null) => (sid ? (appNames.get(sid) ?? null) : null);
  return {
    Sid: n.sid,
    AccountSid: n.accountSid,
    FriendlyName: n.friendlyName,
    PhoneNumber: n.phoneNumber,
    DateCreated: rfc2822(n.dateCreated),
    DateUpdated: rfc2822(n.dateUpdated),
    ApiVersion: n.apiVersion,
    VoiceCallerIdLookup: n.voiceCallerIdLookup,
    VoiceUrl: n.voiceUrl,
    VoiceMethod: n.voiceMethod,
    VoiceFallbackUrl: n.voiceFallbackUrl,
    VoiceFallbackMethod: n.voiceFallbackMethod,
    StatusCallback: n.statusCallback,
    StatusCallbackMethod: n.statusCallbackMethod,
    VoiceApplicationSid: n.voiceApplicationSid,
    VoiceApplicationName: name(n.voiceApplicationSid),
    SmsUrl: n.smsUrl,
    SmsMethod: n.smsMethod,
    SmsFallbackUrl: n.smsFallbackUrl,
    SmsFallbackMethod: n.smsFallbackMethod,
    SmsApplicationSid: n.smsApplicationSid,
    SmsApplicationName: name(n.smsApplicationSid),
    UssdUrl: n.ussdUrl,
    UssdMethod: n.ussdMethod,
    UssdFallbackUrl: n.ussdFallbackUrl,
    UssdFallbackMethod: n.ussdFallbackMethod,
    UssdApplicationSid: n.ussdApplicationSid,
    UssdApplicationName: name(n.ussdApplicationSid),
    ReferUrl: n.referUrl,
    ReferMethod: n.referMethod,
    ReferApplicationSid: n.referApplicationSid,
    ReferApplicationName: name(n.referApplicationSid),
    Capabilities: {
      VoiceCapable: n.voiceCapable,
      SmsCapable: n.smsCapable,
      MmsCapable: n.mmsCapable,
      FaxCapable: n.faxCapable,
    },
    Uri: uriOf(format, `${accountPath(n.accountSid)}/IncomingPhoneNumbers/${n.sid}`),
  };
}
