/**
 * The one parser of the addresses a call or a message is from or to, and of a number to buy:
 * E.164 numbers, digit strings (short codes, dial strings), `client:<name>` and `sip:`/`sips:` URIs.
 * REST routes, the SMS service, inbound routing and the SIP routing policy all read addresses here,
 * so a value is either valid everywhere or refused everywhere with the same words.
 *
 * - E.164 (ITU-T E.164): `+`, a country calling code that exists (libphonenumber-js metadata,
 *   non-geographic codes such as +800 included), then the subscriber digits; 15 digits at most.
 *   No spaces or punctuation: the stored form is the canonical one.
 * - Short code: 3 to 8 digits without `+` (spec §SMS).
 * - Digits: other strings of 1 to 20 digits (a dial string such as `11` or a trunk's national form);
 *   calls accept both digit forms, messages only short codes.
 * - `client:<name>`: an RFC 2396 userinfo of at most 128 characters, optionally followed by
 *   `?Header=value&...` (spec §Calls: they become SIP headers).
 * - `sip:`/`sips:`: a URI that src/sip/sip-uri.ts accepts; `tel:` is not an address form.
 *
 * The presentation of a stored number (its FriendlyName, local or toll-free) lives here too.
 *
 * A value that is a number whose `+` arrived as a space (a form body with an unencoded `+`) gets a
 * message saying to URL-encode it, because that is the mistake behind it every time.
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { parseNameAddr } from '../sip/name-addr.js';
import { parseSipUri, parseUriHeaders, type SipUri, SipUriError } from '../sip/sip-uri.js';

/** The forms an address takes. */
export const AddressKind = {
  E164: 'e164',
  ShortCode: 'shortcode',
  Digits: 'digits',
  Client: 'client',
  Sip: 'sip',
  UssdCode: 'ussd',
} as const;
export type AddressKind = (typeof AddressKind)[keyof typeof AddressKind];

/** A parsed address; `text` is the value as given. */
export type Address =
  | { readonly kind: 'e164'; readonly text: string; readonly countryCode: string }
  | { readonly kind: 'shortcode' | 'digits' | 'ussd'; readonly text: string }
  | {
      readonly kind: 'client';
      readonly text: string;
      readonly name: string;
      readonly headers: Record<string, string>;
    }
  | { readonly kind: 'sip'; readonly text: string; readonly uri: SipUri };

/** An address that is malformed or of a form the caller does not accept; the message is for the client. */
export class AddressError extends Error {
  override readonly name = 'AddressError';
}

const E164_SHAPE = /^\+[1-9]\d{1,14}$/;
const DIGITS = /^\d{1,20}$/;
const SHORT_CODE = /^\d{3,8}$/;
/**
 * A USSD service code (3GPP TS 22.030 §6.5): `*` or `#` led, digit groups separated by `*`, ended
 * by `#` (`*777#`, `*777*3#`, `#123#`); at most 32 characters. Not a phone number: hosted as written.
 */
const USSD_CODE = /^(?:\*|#|\*#|##|\*\*)\d+(?:\*\d*)*#$/;
const USSD_CODE_MAX = 32;
/** RFC 2396 userinfo, as a Client Login must be (spec §Clients). */
const CLIENT_NAME_RE = /^(?:[A-Za-z0-9\-_.!~*'();:&=+$,]|%[0-9A-Fa-f]{2})+$/;
const CLIENT_NAME_MAX = 128;
const TOKEN_RE = /^[A-Za-z0-9\-.!%*_+`'~]+$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
const CONTROL_RE = /[\x00-\x08\x0a-\x1f\x7f]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: replacing control characters is the point
const CONTROL_ANY = /[\x00-\x1f\x7f]/g;
/** A number whose `+` a form decoder turned into a space. */
const PLUS_AS_SPACE = /^ [\d ]*\d$/;

const FORM_WORDS: Record<AddressKind, string> = {
  e164: 'an E.164 number (+15551234567)',
  shortcode: 'a short code (3 to 8 digits)',
  digits: 'digits',
  ussd: 'a USSD code (*777#)',
  client: 'client:<name>',
  sip: 'a sip: URI',
};

/** The country calling code of an E.164 number, or null when `value` is not one. */
export function e164CountryCode(value: string): string | null {
  if (!E164_SHAPE.test(value)) return null;
  const known = countryCodes.get(value);
  if (known !== undefined) return known;
  const parsed = parsePhoneNumberFromString(value);
  const code = parsed?.number === value ? parsed.countryCallingCode : null;
  // Parsing is the costly part of routing a call, and the same numbers come back: remembered,
  // bounded (cleared when full: a miss costs one parse).
  if (countryCodes.size >= COUNTRY_CODE_CACHE_MAX) countryCodes.clear();
  countryCodes.set(value, code);
  return code;
}
const COUNTRY_CODE_CACHE_MAX = 10_000;
const countryCodes = new Map<string, string | null>();

/** True for a canonical E.164 number with a country code that exists. */
export function isE164(value: string): boolean {
  return e164CountryCode(value) !== null;
}

/** True for a USSD service code such as `*777#` or `*777*3#`. */
export function isUssdCode(value: string): boolean {
  return value.length <= USSD_CODE_MAX && USSD_CODE.test(value);
}

/** True for a short code: 3 to 8 digits. */
export function isShortCode(value: string): boolean {
  return SHORT_CODE.test(value);
}

const NANP_TOLL_FREE = new Set(['800', '833', '844', '855', '866', '877', '888']);

/** `local` or `tollfree` as the number shows it (NANP toll-free area codes); mobile is chosen at purchase. */
export function numberTypeOf(e164: string): 'local' | 'tollfree' {
  return e164.startsWith('+1') && NANP_TOLL_FREE.has(e164.slice(2, 5)) ? 'tollfree' : 'local';
}

/** The default FriendlyName: `(555) 123-4567` for NANP numbers, the E.164 form otherwise. */
export function formatNumber(e164: string): string {
  const m = /^\+1(\d{3})(\d{3})(\d{4})$/.exec(e164);
  return m ? `(${m[1]}) ${m[2]}-${m[3]}` : e164;
}

/**
 * The E.164 form of a number written without its `+` (SMPP addresses, SIP user parts), or with
 * visual separators (`+1-555-…`); null when it is not an E.164 number or has fewer than
 * `minBareDigits` digits and no `+`.
 */
export function toE164(value: string, minBareDigits = 7): string | null {
  const compact = value.replace(/[-.()\s]/g, '');
  // Without a `+`, short strings are short codes or extensions, never international numbers.
  if (
    !compact.startsWith('+') &&
    !(compact.length >= minBareDigits && compact.length <= 15 && DIGITS.test(compact))
  )
    return null;
  const candidate = compact.startsWith('+') ? compact : `+${compact}`;
  return isE164(candidate) ? candidate : null;
}

/**
 * The percent-decoded user and the host of a `sip:`/`sips:` URI, bare or in a name-addr
 * (`"Bob" <sip:bob@h>;tag=1`); for a header that lists several (Diversion), the first. Null when
 * the text is not such a URI: callers treat that as "no user" rather than guessing at the text.
 */
export function sipUserAndHost(text: string): { user: string | null; host: string } | null {
  for (const candidate of [text, firstListEntry(text)]) {
    try {
      const { uri } = parseNameAddr(candidate);
      if (uri.scheme === 'tel') return null;
      return { user: uri.user ?? null, host: uri.host };
    } catch (e) {
      if (!(e instanceof SipUriError)) throw e;
    }
  }
  return null;
}

/** The text before the first comma outside quotes and angle brackets (RFC 3261 §7.3.1 lists). */
function firstListEntry(text: string): string {
  let quoted = false;
  let angle = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\' && quoted) i++;
    else if (c === '"') quoted = !quoted;
    else if (!quoted && c === '<') angle = true;
    else if (!quoted && c === '>') angle = false;
    else if (!quoted && !angle && c === ',') return text.slice(0, i).trim();
  }
  return text;
}

/** Why a SIP header name/value pair cannot be sent, or null when it can. */
export function invalidHeaderReason(name: string, value: string): string | null {
  if (!TOKEN_RE.test(name)) return `header name "${name}" is not a SIP token`;
  if (CONTROL_RE.test(value)) return `header "${name}" has control characters in its value`;
  return null;
}

function checkHeaders(headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) {
    const reason = invalidHeaderReason(name, value);
    if (reason) throw new AddressError(reason);
  }
}

function parseClient(text: string): Address {
  const rest = text.slice('client:'.length);
  const q = rest.indexOf('?');
  const name = q === -1 ? rest : rest.slice(0, q);
  if (name === '') throw new AddressError('client: needs a name, e.g. client:alice');
  if (name.length > CLIENT_NAME_MAX || !CLIENT_NAME_RE.test(name)) {
    throw new AddressError(
      `client name must be an RFC 2396 userinfo of at most ${CLIENT_NAME_MAX} characters`,
    );
  }
  let headers: Record<string, string> = {};
  if (q !== -1) {
    try {
      headers = parseUriHeaders(rest.slice(q + 1));
    } catch (e) {
      if (e instanceof SipUriError)
        throw new AddressError(`malformed client headers (${e.reason})`, { cause: e });
      throw e;
    }
    checkHeaders(headers);
  }
  return { kind: 'client', text, name, headers };
}

function parseSip(text: string): Address {
  let uri: SipUri;
  try {
    uri = parseSipUri(text);
  } catch (e) {
    // The reason never repeats the URI, which may hold a password.
    if (e instanceof SipUriError) throw new AddressError(`malformed sip: URI (${e.reason})`, { cause: e });
    throw e;
  }
  checkHeaders(uri.headers);
  return { kind: 'sip', text, uri };
}

/**
 * The value as a message may quote it: at most 40 code points (never half a surrogate pair), visibly
 * cut, control characters shown as `?` so the message stays printable in JSON and XML alike.
 */
function quoted(value: string): string {
  const points = Array.from(value.slice(0, 82));
  const head = points.slice(0, 40).join('').replace(CONTROL_ANY, '?');
  return `'${points.length > 40 ? `${head}…` : head}'`;
}

function classify(field: string, value: string): Address | null {
  const lower = value.slice(0, 7).toLowerCase();
  if (lower.startsWith('client:')) return parseClient(value);
  if (lower.startsWith('sip:') || lower.startsWith('sips:')) return parseSip(value);
  if (lower.startsWith('tel:')) throw new AddressError(`${field}: tel: URIs are not accepted`);
  if (value.startsWith('+')) {
    const countryCode = e164CountryCode(value);
    if (countryCode === null) {
      throw new AddressError(
        `${field} ${quoted(value)} is not a valid E.164 number ('+', a country code, at most 15 digits, no spaces)`,
      );
    }
    return { kind: 'e164', text: value, countryCode };
  }
  if (PLUS_AS_SPACE.test(value)) {
    throw new AddressError(
      `${field} ${quoted(value)} is not a valid E.164 number; URL-encode '+' as %2B (curl --data-urlencode)`,
    );
  }
  if (isUssdCode(value)) return { kind: 'ussd', text: value };
  if (SHORT_CODE.test(value)) return { kind: 'shortcode', text: value };
  if (DIGITS.test(value)) return { kind: 'digits', text: value };
  return null;
}

/**
 * Parses `value` as one of the `accept`ed forms; `field` names it in messages (`From`, `To`).
 * @throws AddressError with a message fit for the API client
 * @example parseAddress('+15551234567', { field: 'To', accept: ['e164'] }) // { kind: 'e164', countryCode: '1', … }
 */
export function parseAddress(
  value: string,
  options: { readonly field: string; readonly accept: readonly AddressKind[] },
): Address {
  const { field, accept } = options;
  let address: Address | null;
  try {
    address = classify(field, value);
  } catch (e) {
    if (!(e instanceof AddressError) || e.message.startsWith(field)) throw e;
    throw new AddressError(`${field}: ${e.message}`, { cause: e.cause });
  }
  if (address === null || !accept.includes(address.kind)) {
    // A SIP URI is not quoted back: it may hold a password.
    const shown = address?.kind === 'sip' ? '' : ` ${quoted(value)}`;
    throw new AddressError(`${field}${shown} must be ${describeForms(accept)}`);
  }
  return address;
}

/** `an E.164 number (+15551234567), client:<name> or a sip: URI`. */
export function describeForms(accept: readonly AddressKind[]): string {
  // Digits include short codes: naming both would read as two different things.
  const kinds = accept.includes('digits') ? accept.filter((k) => k !== 'shortcode') : accept;
  const words = kinds.map((k) => FORM_WORDS[k]);
  return words.length <= 1 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`;
}
