/** Notification, Recording and Gateway DTOs (spec §Notification, §Recording, §Gateway). */
import { rfc2822 } from '../../dates.js';
import type { Gateway, GatewayRegistrationStatus } from '../../store/gateway-store.js';
import type { Notification } from '../../store/notification-store.js';
import type { Recording } from '../../store/recording-store.js';
import type { Dto, Format } from '../render.js';
import { accountPath, uriOf } from '../uris.js';

/** Request parameters that carry the text of a message (SMS and email `Body`). */
const MESSAGE_TEXT_PARAM = /^body$/i;
export const REDACTED = '[redacted]';

/**
 * The stored request variables (form-encoded) with message text replaced by REDACTED, for roles
 * that may not read messages (spec §Authentication 4: a ProvisioningAgent may not read SMS text).
 */
export function withoutMessageText(variables: string | null): string | null {
  if (variables === null) return null;
  return variables
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const raw = eq === -1 ? pair : pair.slice(0, eq);
      let name = raw;
      try {
        name = decodeURIComponent(raw.replace(/\+/g, ' '));
      } catch {
        // An undecodable name is kept as it is and compared raw.
      }
      return MESSAGE_TEXT_PARAM.test(name.trim()) ? `${raw}=${encodeURIComponent(REDACTED)}` : pair;
    })
    .join('&');
}

/** `withMessageText` false for roles that may not read message text (see withoutMessageText). */
export function notificationDto(n: Notification, format: Format, withMessageText = true): Dto {
  return {
    Sid: n.sid,
    AccountSid: n.accountSid,
    CallSid: n.callSid,
    ApiVersion: n.apiVersion,
    Log: n.log,
    ErrorCode: n.errorCode,
    MoreInfo: n.moreInfo,
    MessageText: n.messageText,
    MessageDate: rfc2822(n.messageDate),
    RequestUrl: n.requestUrl,
    RequestMethod: n.requestMethod,
    RequestVariables: withMessageText ? n.requestVariables : withoutMessageText(n.requestVariables),
    ResponseHeaders: n.responseHeaders,
    ResponseBody: n.responseBody,
    DateCreated: rfc2822(n.dateCreated),
    DateUpdated: rfc2822(n.dateUpdated),
    Uri: uriOf(format, `${accountPath(n.accountSid)}/Notifications/${n.sid}`),
  };
}

export function recordingDto(r: Recording, format: Format, publicUrl: string): Dto {
  const path = `${accountPath(r.accountSid)}/Recordings/${r.sid}`;
  return {
    Sid: r.sid,
    AccountSid: r.accountSid,
    CallSid: r.callSid,
    Duration: r.duration,
    ApiVersion: r.apiVersion,
    DateCreated: rfc2822(r.dateCreated),
    DateUpdated: rfc2822(r.dateUpdated),
    Uri: uriOf(format, path),
    FileUri: `${publicUrl}${path}.wav`,
  };
}

export const MASKED = '********';

/**
 * A gateway with its live registration (docs/decisions.md): `RegistrationState` is null when
 * Register is false, `unknown` when no node reports one yet.
 */
export function gatewayDto(g: Gateway, format: Format, reg: GatewayRegistrationStatus | null = null): Dto {
  return {
    Sid: g.sid,
    AccountSid: g.accountSid,
    FriendlyName: g.friendlyName,
    UserName: g.userName,
    Password: g.password === null ? null : MASKED,
    Proxy: g.proxy,
    Register: g.register,
    TTL: g.ttl,
    RegistrationState: g.register ? (reg?.state ?? 'unknown') : null,
    RegistrationExpires: g.register && reg?.expiresAt ? rfc2822(new Date(reg.expiresAt)) : null,
    RegistrationStatusCode: g.register ? (reg?.lastStatus ?? null) : null,
    DateCreated: rfc2822(g.dateCreated),
    DateUpdated: rfc2822(g.dateUpdated),
    Uri: uriOf(format, `${accountPath(g.accountSid)}/Management/Gateways/${g.sid}`),
  };
}
