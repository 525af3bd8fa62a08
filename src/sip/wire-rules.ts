/**
 * Byte-level rules for what comes off the wire, on top of the grammar checks in validate.ts:
 * control characters (RFC 3261 §25.1: CTL octets appear only as a quoted-pair inside a
 * quoted-string, never in a start line, token, URI or header value otherwise) and the lengths we
 * accept for values that end up in call, message and registration records (docs/sip.md "Limits").
 *
 * Values we store go to Postgres text columns, which cannot hold NUL: a request that could carry
 * one into a record (a known method with a quoted-pair NUL, or an INVITE/MESSAGE with `%00` in a
 * URI that is unescaped for the record) is refused here with 400 rather than failing later.
 */

/** Longest accepted values, in bytes (chars of the latin1 text). Over the limit → 400. */
export const SipLimits = {
  /** Request-URI. */
  REQUEST_URI: 1_024,
  /** Call-ID. */
  CALL_ID: 256,
  /** Display name of From, To or Contact, quotes included. */
  DISPLAY_NAME: 256,
  /** User part of the URI in the Request-URI, From or To (escaped form). */
  USER: 256,
  /** User-Agent and Server. */
  USER_AGENT: 256,
  /** Any single header value (after unfolding). */
  HEADER_VALUE: 8_192,
} as const;

const isCtl = (code: number): boolean => (code < 0x20 && code !== 0x09) || code === 0x7f;
/** Any CTL octet (CR and LF included): without one, a value holds no control character anywhere. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const ANY_CTL = /[\x00-\x08\x0a-\x1f\x7f]/;

/**
 * Where `value` holds a control character: 'bare' outside a quoted-pair (never allowed), 'quoted'
 * as a quoted-pair (allowed by the grammar, refused where the value may be stored), else null.
 */
export function controlIn(value: string): 'bare' | 'quoted' | null {
  // Nearly every value has no control character at all: one native scan says so.
  if (!ANY_CTL.test(value)) return null;
  let quoted = false;
  let inQuotedPair: 'quoted' | null = null;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (quoted && code === 0x5c /* \ */) {
      const next = value.charCodeAt(i + 1);
      if (Number.isNaN(next)) return null;
      // CR and LF cannot be escaped (quoted-pair excludes them).
      if (next === 0x0a || next === 0x0d) return 'bare';
      if (isCtl(next)) inQuotedPair = 'quoted';
      i++;
      continue;
    }
    if (code === 0x22 /* " */) quoted = !quoted;
    else if (isCtl(code)) return 'bare';
  }
  return inQuotedPair;
}

/** `%00`–`%1F` or `%7F`: an escaped control character, unescaped into records for INVITE/MESSAGE. */
const ESCAPED_CTL = /%(?:[01][0-9A-Fa-f]|7[Ff])/;

/** Methods whose header values may reach a stored record (calls, messages, registrations, auth). */
const STORING = new Set(['INVITE', 'MESSAGE', 'REGISTER', 'BYE', 'CANCEL', 'ACK', 'OPTIONS', 'INFO']);
/** Methods whose URIs' user parts are unescaped into records. */
const UNESCAPING = new Set(['INVITE', 'MESSAGE']);

/** Body types whose content is text: a NUL or other control character there is malformed. */
const TEXT_BODY = /^(?:text\/|application\/(?:sdp|pidf\+xml|xml|json|dtmf-relay|dtmf|vnd\.[^;]*\+xml)\b)/i;

export type WireProblem = { readonly status: 400; readonly reason: string };

const problem = (reason: string): WireProblem => ({ status: 400, reason });

/** User part and display name of a name-addr/addr-spec value (rough, for length checks only). */
function parts(value: string): { display: string; user: string } {
  const lt = value.indexOf('<');
  const display = lt > 0 ? value.slice(0, lt).trim() : '';
  const from = lt >= 0 ? lt + 1 : 0;
  const gt = lt >= 0 ? value.indexOf('>', lt) : -1;
  const to = gt >= 0 ? gt : value.length;
  // `scheme:user@…` (the scheme as in RFC 3986); no `@` within the URI, no user.
  let i = from;
  if (!isAlpha(value.charCodeAt(i))) return { display, user: '' };
  while (i < to && isSchemeChar(value.charCodeAt(i))) i++;
  if (value.charCodeAt(i) !== 0x3a /* : */ || i >= to) return { display, user: '' };
  const at = value.indexOf('@', i + 1);
  return { display, user: at >= 0 && at < to ? value.slice(i + 1, at) : '' };
}

const isAlpha = (c: number): boolean => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isSchemeChar = (c: number): boolean =>
  isAlpha(c) || (c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2d || c === 0x2e;

/**
 * The problem with a request's start line, headers (`names` lower case, compact forms expanded,
 * and their `values`, in order) and body, or null. Only requests are checked here: a broken response is dropped by the caller.
 */
export function requestProblem(
  method: string,
  requestUri: string,
  startLine: string,
  names: readonly string[],
  values: readonly string[],
  body: string,
): WireProblem | null {
  if (controlIn(startLine) !== null) return problem('Control Character In Request-Line');
  if (requestUri.length > SipLimits.REQUEST_URI) return problem('Request-URI Too Long');
  const storing = STORING.has(method);
  const unescaping = UNESCAPING.has(method);
  if (unescaping && ESCAPED_CTL.test(parts(requestUri).user))
    return problem('Control Character In Request-URI');
  let contentType = '';
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    const value = values[i] as string;
    const ctl = controlIn(value);
    if (ctl === 'bare' || (ctl === 'quoted' && storing)) return problem(`Control Character In ${name}`);
    if (value.length > SipLimits.HEADER_VALUE) return problem(`${name} Too Long`);
    switch (name) {
      case 'call-id':
        if (value.length > SipLimits.CALL_ID) return problem('Call-ID Too Long');
        break;
      case 'user-agent':
      case 'server':
        if (value.length > SipLimits.USER_AGENT) return problem(`${name} Too Long`);
        break;
      case 'from':
      case 'to':
      case 'contact': {
        const p = parts(value);
        if (p.display.length > SipLimits.DISPLAY_NAME) return problem(`${name} Display Name Too Long`);
        if (p.user.length > SipLimits.USER) return problem(`${name} User Too Long`);
        if (unescaping && name !== 'contact' && ESCAPED_CTL.test(p.user))
          return problem(`Control Character In ${name}`);
        break;
      }
      case 'content-type':
        contentType = value;
        break;
    }
  }
  // A body without Content-Type is text (RFC 3261 §20.15 requires the header for a non-empty body;
  // the lenient reading treats it as text/plain, so it must not carry control bytes either).
  const textual = contentType === '' || TEXT_BODY.test(contentType);
  if (textual && body.length > 0 && hasBodyControl(body)) return problem('Control Character In Body');
  return null;
}

/** NUL or another C0 control other than HTAB, CR, LF and FF (which text bodies use). */
function hasBodyControl(body: string): boolean {
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d && c !== 0x0c) || c === 0x7f) return true;
  }
  return false;
}
