/**
 * Inbound call routing (spec §Incoming phone number, §Client): where an INVITE goes.
 *
 * 1. The dialled number is the user part of the Request-URI (else of To); digits with or without
 *    `+` are looked up as E.164 among the hosted IncomingPhoneNumbers. INVITEs to a hosted number
 *    are accepted from any source unless SIP_TRUSTED_SOURCES lists the IPs/CIDRs allowed (403).
 * 2. A number's voice application (its RCML URL) wins over its VoiceUrl (spec: "if an application
 *    sid is set, the URLs of the same channel are ignored"). No number, or a number with neither →
 *    404 and Notification 11005 (on the number's account when there is one).
 * 3. A call from a registered client that dials no hosted number runs the client's VoiceUrl /
 *    application when it has one; else it is bridged to the dialled client (when registered, 480
 *    when not) — the call record carries the calling client's account.
 * 4. The account of the number or client must be active, else 403.
 */
import { sipUserAndHost, toE164 } from '../../numbers/address.js';
import type { InboundInvite } from '../../sip/port.js';
import type { Application } from '../../store/application-store.js';
import type { Client } from '../../store/client-store.js';
import type { IncomingNumber } from '../../store/number-store.js';

export type HttpMethod = 'GET' | 'POST';

/** Where an inbound call goes. */
export type InboundRoute =
  | {
      readonly kind: 'markup';
      readonly accountSid: string;
      readonly number: IncomingNumber | null;
      readonly clientSid: string | null;
      readonly from: string;
      readonly to: string;
      readonly url: string;
      readonly method: HttpMethod;
      readonly fallbackUrl: string | null;
      readonly fallbackMethod: HttpMethod;
      readonly apiVersion: string;
    }
  | {
      /** Client to client: bridge the caller to the dialled client's registered contacts. */
      readonly kind: 'client';
      readonly accountSid: string;
      readonly clientSid: string;
      readonly from: string;
      readonly to: string;
      readonly login: string;
    }
  | {
      readonly kind: 'reject';
      readonly status: number;
      readonly reason: string;
      /** Notification to write (11005 …) and on which account. */
      readonly notify: { readonly accountSid: string; readonly errorCode: number } | null;
    };

export interface InboundRoutingDeps {
  findNumber(e164: string): Promise<IncomingNumber | null>;
  getApplication(accountSid: string, sid: string): Promise<Application | null>;
  getClient(accountSid: string, sid: string): Promise<Client | null>;
  /** A client of the organization with `domain`, by login. */
  findClient(domain: string, login: string): Promise<Client | null>;
  /** The organization domain a SIP host stands for (our own addresses → the default domain). */
  domainOf(host: string): string;
  accountStatus(accountSid: string): Promise<string | null>;
  /** Parsed SIP_TRUSTED_SOURCES; empty = any source. */
  readonly trustedSources: readonly string[];
}

/** Notification 11005: the destination number cannot be found or has no application attached. */
export const NUMBER_NOT_ROUTABLE = 11005;

/** The dialled user part: Request-URI user, else To user; URL-decoded; null when none. */
export function dialledUser(invite: Pick<InboundInvite, 'requestUri' | 'to'>): string | null {
  for (const uri of [invite.requestUri, invite.to.uri]) {
    const user = sipUserAndHost(uri)?.user;
    if (user) return user;
  }
  return null;
}

/** A user part as an E.164 number (`+` added to bare digits), or null when it is not one. */
export function asE164(user: string): string | null {
  return toE164(user.replace(/^tel:/i, ''));
}

/** The caller as shown in From of the call record: the number, `client:login`, or the SIP URI user. */
export function callerOf(invite: InboundInvite): string {
  if (invite.client) return `client:${invite.client.login}`;
  const user = sipUserAndHost(invite.from.uri)?.user;
  if (!user) return invite.from.uri;
  return asE164(user) ?? user;
}

/** IPv4 dotted address in an IPv4 CIDR (or equal to a bare address); IPv6 matched literally. */
export function inSources(address: string, sources: readonly string[]): boolean {
  const ip = address.replace(/^::ffff:/, '');
  const toInt = (a: string) => a.split('.').reduce((n, o) => (n << 8) + Number(o), 0) >>> 0;
  for (const s of sources) {
    const [net, bits] = s.split('/');
    if (!net) continue;
    if (bits === undefined) {
      if (net === ip) return true;
      continue;
    }
    if (!/^\d+\.\d+\.\d+\.\d+$/.test(net) || !/^\d+\.\d+\.\d+\.\d+$/.test(ip)) continue;
    const n = Number(bits);
    const mask = n === 0 ? 0 : (~0 << (32 - n)) >>> 0;
    if ((toInt(net) & mask) === (toInt(ip) & mask)) return true;
  }
  return false;
}

export async function routeInbound(invite: InboundInvite, deps: InboundRoutingDeps): Promise<InboundRoute> {
  const user = dialledUser(invite);
  const e164 = user ? asE164(user) : null;
  const number = e164 ? await deps.findNumber(e164) : null;
  const from = callerOf(invite);

  if (number) {
    if (
      !invite.client &&
      deps.trustedSources.length &&
      !inSources(invite.source.address, deps.trustedSources)
    )
      return { kind: 'reject', status: 403, reason: 'Source Not Trusted', notify: null };
    // A client calling a number is billed to the client's account; anyone else to the number's.
    const accountSid = invite.client?.accountSid ?? number.accountSid;
    if ((await deps.accountStatus(number.accountSid)) !== 'active')
      return { kind: 'reject', status: 403, reason: 'Account Not Active', notify: null };
    const app = number.voiceApplicationSid
      ? await deps.getApplication(number.accountSid, number.voiceApplicationSid)
      : null;
    const url = app ? app.rcmlUrl : number.voiceUrl;
    if (!url)
      return {
        kind: 'reject',
        status: 404,
        reason: 'No Application',
        notify: { accountSid: number.accountSid, errorCode: NUMBER_NOT_ROUTABLE },
      };
    return {
      kind: 'markup',
      accountSid,
      number,
      clientSid: invite.client?.sid ?? null,
      from,
      to: number.phoneNumber,
      url,
      method: app ? 'POST' : number.voiceMethod,
      fallbackUrl: app ? null : number.voiceFallbackUrl,
      fallbackMethod: app ? 'POST' : number.voiceFallbackMethod,
      apiVersion: app?.apiVersion ?? number.apiVersion,
    };
  }

  if (invite.client) {
    const caller = await deps.getClient(invite.client.accountSid, invite.client.sid);
    if (!caller) return { kind: 'reject', status: 403, reason: 'Unknown Client', notify: null };
    if ((await deps.accountStatus(caller.accountSid)) !== 'active')
      return { kind: 'reject', status: 403, reason: 'Account Not Active', notify: null };
    const app = caller.voiceApplicationSid
      ? await deps.getApplication(caller.accountSid, caller.voiceApplicationSid)
      : null;
    const url = app ? app.rcmlUrl : caller.voiceUrl;
    const to = user ?? '';
    if (url)
      return {
        kind: 'markup',
        accountSid: caller.accountSid,
        number: null,
        clientSid: caller.sid,
        from,
        to,
        url,
        method: app ? 'POST' : caller.voiceMethod,
        fallbackUrl: app ? null : caller.voiceFallbackUrl,
        fallbackMethod: app ? 'POST' : caller.voiceFallbackMethod,
        apiVersion: app?.apiVersion ?? caller.apiVersion,
      };
    const host = sipUserAndHost(invite.requestUri)?.host ?? '';
    const callee = user ? await deps.findClient(deps.domainOf(host), user) : null;
    if (callee)
      return {
        kind: 'client',
        accountSid: caller.accountSid,
        clientSid: caller.sid,
        from,
        to: `client:${callee.login}`,
        login: callee.login,
      };
  }
  return { kind: 'reject', status: 404, reason: 'Not Found', notify: null };
}
