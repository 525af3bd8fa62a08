/**
 * Where a handset's USSD INVITE goes (Restcomm's UssdCallManager): the Request-URI user (else the
 * To user) — a USSD code (`*777#`, `*777*3#`), a short code (`5544`) or a number — is looked up among
 * the IncomingPhoneNumbers as written (an E.164 number in its canonical form). The number's
 * UssdApplicationSid wins over its UssdUrl; the account must be active.
 *
 * - no such number → 404;
 * - the account is not active → 403 and Notification 11005 on it;
 * - the number has no USSD application or URL → 404 and Notification 11005.
 */
import { isShortCode, isUssdCode } from '../../numbers/address.js';
import type { InboundInvite } from '../../sip/port.js';
import type { Application } from '../../store/application-store.js';
import type { IncomingNumber } from '../../store/number-store.js';
import type { HttpMethod } from '../../webhooks/index.js';
import { asE164, callerOf, dialledUser, NUMBER_NOT_ROUTABLE } from '../call/inbound-routing.js';

export type UssdRoute =
  | {
      readonly kind: 'ussd';
      readonly accountSid: string;
      readonly number: IncomingNumber;
      readonly from: string;
      readonly to: string;
      readonly url: string;
      readonly method: HttpMethod;
      readonly fallback: { readonly url: string; readonly method: HttpMethod } | null;
      readonly apiVersion: string;
    }
  | {
      readonly kind: 'reject';
      readonly status: number;
      readonly reason: string;
      readonly notify: { readonly accountSid: string; readonly errorCode: number } | null;
    };

export interface UssdRoutingDeps {
  /** The IncomingPhoneNumber whose PhoneNumber is exactly `number`. */
  findNumber(number: string): Promise<IncomingNumber | null>;
  getApplication(accountSid: string, sid: string): Promise<Application | null>;
  accountStatus(accountSid: string): Promise<string | null>;
}

/** The stored form of a dialled USSD user part: the code or short code as is, a number in E.164. */
export function ussdNumberKey(user: string): string | null {
  if (isUssdCode(user) || isShortCode(user)) return user;
  return asE164(user);
}

export async function routeUssd(invite: InboundInvite, deps: UssdRoutingDeps): Promise<UssdRoute> {
  const user = dialledUser(invite);
  const key = user ? ussdNumberKey(user) : null;
  const number = key ? await deps.findNumber(key) : null;
  if (!number) return { kind: 'reject', status: 404, reason: 'Not Found', notify: null };
  const notify = { accountSid: number.accountSid, errorCode: NUMBER_NOT_ROUTABLE };
  if ((await deps.accountStatus(number.accountSid)) !== 'active')
    return { kind: 'reject', status: 403, reason: 'Account Not Active', notify };
  const app = number.ussdApplicationSid
    ? await deps.getApplication(number.accountSid, number.ussdApplicationSid)
    : null;
  const url = app ? app.rcmlUrl : number.ussdUrl;
  if (!url) return { kind: 'reject', status: 404, reason: 'No USSD Application', notify };
  return {
    kind: 'ussd',
    accountSid: number.accountSid,
    number,
    from: callerOf(invite),
    to: number.phoneNumber,
    url,
    method: app ? 'POST' : number.ussdMethod,
    fallback:
      !app && number.ussdFallbackUrl
        ? { url: number.ussdFallbackUrl, method: number.ussdFallbackMethod }
        : null,
    apiVersion: app?.apiVersion ?? number.apiVersion,
  };
}
