/**
 * What each error code means to a client: the text of the error reference served at /docs/errors
 * (and of docs/errors.md, which a test keeps in step). REST codes come from ErrorCatalog — the
 * Record type makes a catalogue entry without an explanation a compile error; Notification codes are
 * the ones the runtime writes for problems during calls and messages.
 */
import { ErrorCatalog, type ErrorName } from './errors.js';

export const REST_ERROR_WHEN: Readonly<Record<ErrorName, string>> = {
  Unauthenticated:
    'Missing or wrong Basic credentials (answered with `WWW-Authenticate: Basic realm="Switchboard"`).',
  AccountNotActive: 'Correct credentials of an uninitialized, suspended or closed account.',
  ClosedAccount: 'Any modification of a closed account.',
  Forbidden: "The caller's role may not do this.",
  NotFound: "Unknown path or resource, or another tenant's resource.",
  MethodNotAllowed: 'The method is not supported on the resource (`Allow` lists the supported ones).',
  Conflict: 'The resource cannot take this change in its current state (a call that is not live).',
  AlreadyExists: 'A unique identity is taken (email address, login, domain…).',
  PreconditionFailed: 'Migration without `Organization`.',
  PayloadTooLarge: 'The request body is over the limit.',
  UnsupportedMediaType: 'A body in another content type than the route accepts (form bodies elsewhere).',
  TooManyRequests: 'Rate limit or login throttling (not processed; retry after `Retry-After` seconds).',
  Internal: 'Unexpected failure (logged on the server).',
  Unavailable: 'A dependency is down or disabled (SIP disabled, database unreachable).',
  InvalidParameter: 'A parameter has an invalid value or is too long; the message names it.',
  MissingParameter: 'A required parameter is missing; the message names it.',
  MalformedBody: 'Unparsable body (bad percent-encoding, bad or too deeply nested JSON).',
  NoNumberAvailable: 'No phone number matches a purchase request.',
  NumberAlreadyOwned:
    'A purchase of a PhoneNumber the account already owns (a number another account owns stays 21452, which reveals nothing about that tenant).',
  RangeNotSatisfiable: 'A byte range outside a recording.',
  CallerIdNotVerified:
    'With `CALLER_ID_POLICY=verified`, a call `From` that is an E.164 number neither owned by the account nor one of its OutgoingCallerIds.',
  CallerIdExists: 'An OutgoingCallerId for a number the account already has as one.',
  SmsInvalidTo:
    'SMS `To` is not an E.164 number, a short code (3–8 digits) or `client:<login>` of a client of the account.',
  SmsBodyRequired: 'SMS without `Body` (or an empty one).',
  SmsFromNotOwned: 'SMS `From` is not an SMS-capable incoming number of the account.',
  SmsNotConfigured: 'SMS to a number or short code while no SMSC is configured (`SMPP_URL` unset).',
  SmsBodyTooLong: 'SMS `Body` over 1,600 characters (10 concatenated segments).',
  EmailNotConfigured: 'Email requested while `SMTP_URL` is not set.',
  EmailSendFailed: 'The SMTP server refused the message or could not be reached.',
};

export interface NotificationCode {
  readonly code: number;
  readonly when: string;
}

const webhookFailed = 'A markup or callback request failed; the response body is kept in the Notification.';

/** ErrorCode values of Notifications (`/Notifications`, `/Calls/{sid}/Notifications`). */
export const NOTIFICATION_CODES: readonly NotificationCode[] = [
  ...[11100, 11200, 11205, 11210, 11215].map((code) => ({ code, when: webhookFailed })),
  { code: 11750, when: 'The markup response body is over 1 MiB.' },
  { code: 12003, when: 'Inbound SMS to a number without a valid SMS URL.' },
  {
    code: 12100,
    when: 'The markup cannot be parsed: not well-formed, forbidden characters, not UTF-8, empty, DOCTYPE, wrong root, too deep or too many elements.',
  },
  {
    code: 12200,
    when: 'Markup schema warning: unknown verb or attribute, bad value, misplaced verb, stray text.',
  },
  { code: 12300, when: "The markup response's Content-Type is not XML, HTML or plain text." },
  { code: 12400, when: 'A verb failed while running (media, recording, SMS, email).' },
  {
    code: 13224,
    when: "An outbound leg could not be set up: the far end's SIP status and reason, or why no INVITE went out (no route, client not registered, invalid target). The call's `sip_response_code` holds the status.",
  },
  {
    code: 13225,
    when: "An outbound leg's target was refused by the SIP target policy (the leg fails with 403).",
  },
  { code: 13250, when: 'No media endpoint could be allocated (RTP port range exhausted).' },
];

export interface RestErrorEntry {
  readonly name: ErrorName;
  readonly code: number;
  readonly status: number;
  readonly message: string;
  readonly when: string;
}

/** The REST codes in code order, for the reference page. */
export function restErrors(): RestErrorEntry[] {
  return (Object.entries(ErrorCatalog) as [ErrorName, (typeof ErrorCatalog)[ErrorName]][])
    .map(([name, spec]) => ({ name, ...spec, when: REST_ERROR_WHEN[name] }))
    .sort((a, b) => a.code - b.code);
}
