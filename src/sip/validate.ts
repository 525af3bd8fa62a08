/**
 * Strict checks on a raw SIP message before it is parsed (RFC 3261 §7, §8.2, §25 grammar; the
 * outcome classes of RFC 4475). The `sip` package's parser is lenient and drops what it cannot
 * read; a server must instead answer a broken request with 400 (or 505 for another SIP version)
 * and silently drop a broken response (§18.1.2 / RFC 4475 §3.1.2).
 *
 * Input is a latin1 string (one byte per char), exactly as it came off the wire.
 */
import { uriScheme } from './sip-uri.js';
import { controlIn, requestProblem } from './wire-rules.js';

/**
 * A message that passed, as the checks read it: the request's method and URI (method null for a
 * response) and its header lines in order, as canonical names (lower case, compact forms expanded)
 * and trimmed values, folded lines joined. A REGISTER is handled from this alone (register-request.ts).
 */
export interface ScannedMessage {
  readonly method: string | null;
  readonly requestUri: string;
  readonly names: readonly string[];
  readonly values: readonly string[];
  readonly body: string;
}

export type Verdict =
  | { readonly kind: 'ok'; readonly message: ScannedMessage }
  | { readonly kind: 'reject'; readonly status: number; readonly reason: string }
  | { readonly kind: 'drop'; readonly reason: string };

const TOKEN = "[A-Za-z0-9\\-.!%*_+`'~]+";
const TOKEN_RE = new RegExp(`^${TOKEN}$`);
const REQUEST_LINE = new RegExp(`^(${TOKEN}) (\\S+) SIP/(\\d+)\\.(\\d+)$`);
const LOOSE_REQUEST_LINE = new RegExp(`^${TOKEN}[ \\t]+.*[ \\t]SIP/(\\d+\\.\\d+)[ \\t]*$`);
const STATUS_LINE = /^SIP\/(\d+)\.(\d+) (\d{3}) ([^\r\n]*)$/;
const COMPACT: Readonly<Record<string, string>> = {
  i: 'call-id',
  m: 'contact',
  e: 'content-encoding',
  l: 'content-length',
  c: 'content-type',
  f: 'from',
  s: 'subject',
  k: 'supported',
  t: 'to',
  v: 'via',
  o: 'event',
  r: 'refer-to',
  u: 'allow-events',
};
/** Headers that may appear once only (RFC 3261 §7.3.1: not a comma-separated list). */
const SINGLE = [
  'to',
  'from',
  'call-id',
  'cseq',
  'max-forwards',
  'content-length',
  'content-type',
  'expires',
] as const;
/** Headers every message must have. */
const REQUIRED = ['via', 'to', 'from', 'call-id', 'cseq'] as const;
/** The headers validateRaw reads, each with a bit in its masks of the ones present and repeated. */
const CHECKED = [...SINGLE, 'via', 'contact', 'route', 'record-route'] as const;
type CheckedHeader = (typeof CHECKED)[number];
const CHECKED_BITS = new Map<string, number>(CHECKED.map((name, i) => [name, i]));
const bitOf = (name: CheckedHeader): number => CHECKED_BITS.get(name) as number;
/** A value per checked header, none yet (filled in, not grown: its elements stay packed). */
const NO_VALUES: readonly (string | undefined)[] = CHECKED.map(() => undefined);
const MAX_INT32 = 2 ** 31 - 1;
const KNOWN_METHODS = new Set([
  'INVITE',
  'ACK',
  'CANCEL',
  'BYE',
  'OPTIONS',
  'REGISTER',
  'MESSAGE',
  'INFO',
  'PRACK',
  'UPDATE',
  'SUBSCRIBE',
  'NOTIFY',
  'REFER',
  'PUBLISH',
]);

interface Parsed {
  readonly startLine: string;
  /** Header lines, folded continuations joined (§7.3.1). */
  readonly headers: readonly string[];
  readonly body: string;
}

const CR = 0x0d;
const LF = 0x0a;
const SP = 0x20;
const HTAB = 0x09;

/** Where the text starts after leading empty lines (CRLFs a peer may send before a message, §7.5). */
function textStart(raw: string): number {
  let i = 0;
  while (raw.charCodeAt(i) === CR && raw.charCodeAt(i + 1) === LF) i += 2;
  return i;
}

/** Splits head and body and unfolds header lines; null when there is no blank line. */
export function splitMessage(raw: string): Parsed | null {
  const start = textStart(raw);
  const end = raw.indexOf('\r\n\r\n', start);
  if (end < 0) return null;
  // Lines are cut by index: no array of all lines, no copy of the head.
  let eol = raw.indexOf('\r\n', start);
  if (eol < 0 || eol > end) eol = end;
  const startLine = raw.slice(start, eol);
  const headers: string[] = [];
  while (eol < end) {
    const from = eol + 2;
    let next = raw.indexOf('\r\n', from);
    if (next < 0 || next > end) next = end;
    const first = raw.charCodeAt(from);
    // Folded continuation lines join the header before them (§7.3.1).
    if ((first === SP || first === HTAB) && headers.length > 0)
      headers[headers.length - 1] += ` ${raw.slice(from, next).trim()}`;
    else headers.push(raw.slice(from, next));
    eol = next;
  }
  return { startLine, headers, body: raw.slice(end + 4) };
}

/** token characters (RFC 3261 §25.1), by code: the TOKEN pattern's, looked up without a regex. */
const TOKEN_CHAR = Uint8Array.from({ length: 128 }, (_, c) =>
  TOKEN_RE.test(String.fromCharCode(c)) ? 1 : 0,
);
const isTokenChar = (code: number): boolean => code < 128 && TOKEN_CHAR[code] === 1;

/** Header names as written (`Via`, `v`, `CSeq`) to their canonical lower-case form; bounded. */
const NAMES = new Map<string, string>();
const MAX_NAMES = 1_000;

function canonicalName(written: string): string {
  const known = NAMES.get(written);
  if (known !== undefined) return known;
  const lower = written.toLowerCase();
  // Only one-letter names have compact forms (and a lookup of `constructor` must not find Object's).
  const name = (lower.length === 1 ? COMPACT[lower] : undefined) ?? lower;
  if (NAMES.size >= MAX_NAMES) NAMES.clear();
  NAMES.set(written, name);
  return name;
}

/** Length of the header name (a token) at the start of `line`, or -1 when the line is no `token: value`. */
function nameEnd(line: string): number {
  let i = 0;
  while (i < line.length && isTokenChar(line.charCodeAt(i))) i++;
  if (i === 0) return -1;
  let j = i;
  while (line.charCodeAt(j) === SP || line.charCodeAt(j) === HTAB) j++;
  return line.charCodeAt(j) === 0x3a /* : */ ? i : -1;
}

/** Header name (lower case, compact forms expanded) and value; null for a malformed line. */
export function headerLine(line: string): readonly [string, string] | null {
  const n = nameEnd(line);
  if (n < 0) return null;
  return [canonicalName(line.slice(0, n)), line.slice(line.indexOf(':', n) + 1).trim()];
}

const VIA_PARM = new RegExp(
  `^SIP[ \\t]*/[ \\t]*2\\.0[ \\t]*/[ \\t]*${TOKEN}[ \\t]+(?:\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9\\-.]+)(?:[ \\t]*:[ \\t]*\\d{1,5})?` +
    `(?:[ \\t]*;[ \\t]*${TOKEN}(?:[ \\t]*=[ \\t]*(?:${TOKEN}|\\[[0-9A-Fa-f:.]+\\]|"(?:[^"\\\\]|\\\\.)*"))?)*$`,
);

/**
 * Splits a header value at commas (or `separator`: `;` cuts a Via entry into its parameters)
 * outside quotes and angle brackets; the parts trimmed.
 */
export function splitList(value: string, separator: ',' | ';' = ','): string[] {
  // Most values are one entry: no scan for the places to cut.
  if (!value.includes(separator)) return [value.trim()];
  const cut = separator.charCodeAt(0);
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let from = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (quoted) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) quoted = false;
      continue;
    }
    if (c === 0x22) quoted = true;
    else if (c === 0x3c /* < */) depth++;
    else if (c === 0x3e /* > */) depth--;
    else if (c === cut && depth === 0) {
      out.push(value.slice(from, i).trim());
      from = i + 1;
    }
  }
  out.push(value.slice(from).trim());
  return out;
}

const SCHEME_URI = /^([A-Za-z][A-Za-z0-9+\-.]*):(\S+)$/;

/**
 * name-addr or addr-spec followed by parameters (To, From, Contact, Route entries). Returns the URI
 * or null when malformed: unbalanced quotes or brackets, an unquoted display name with characters
 * outside token, a bare addr-spec with spaces, a missing scheme.
 */
export function nameAddrUri(value: string): string | null {
  const v = value.trim();
  const lt = v.indexOf('<');
  if (lt >= 0) {
    const display = v.slice(0, lt).trim();
    if (display !== '') {
      if (display.startsWith('"')) {
        if (!/^"(?:[^"\\]|\\[^\r\n])*"$/.test(display)) return null;
      } else if (!display.split(/[ \t]+/).every((w) => TOKEN_RE.test(w))) return null;
    }
    const gt = v.indexOf('>', lt);
    if (gt < 0) return null;
    const uri = v.slice(lt + 1, gt);
    if (!SCHEME_URI.test(uri)) return null;
    if (!paramsOk(v.slice(gt + 1))) return null;
    return uri;
  }
  if (v.includes('>') || v.includes('"')) return null;
  // addr-spec: parameters after ';' belong to the header, so the URI has none (§20.10).
  const semi = v.indexOf(';');
  const uri = (semi < 0 ? v : v.slice(0, semi)).trim();
  if (!SCHEME_URI.test(uri) || uri.includes('?')) return null;
  if (!paramsOk(semi < 0 ? '' : v.slice(semi))) return null;
  return uri;
}

/** Header parameters after a name-addr or addr-spec (compiled once: it runs for every To, From, Contact). */
const PARAMS = new RegExp(
  `^(?:[ \\t]*;[ \\t]*${TOKEN}(?:[ \\t]*=[ \\t]*(?:${TOKEN}|\\[[0-9A-Fa-f:.]+\\]|"(?:[^"\\\\]|\\\\.)*"))?)*[ \\t]*$`,
);

function paramsOk(rest: string): boolean {
  return PARAMS.test(rest);
}

const CONTENT_TYPE = new RegExp(`^${TOKEN}/${TOKEN}(?:[ \\t]*;.*)?$`);

const reject = (status: number, reason: string): Verdict => ({ kind: 'reject', status, reason });
const drop = (reason: string): Verdict => ({ kind: 'drop', reason });

/**
 * The verdict on one raw message. `datagram` is true for UDP, where a Content-Length larger than
 * the bytes received is an error (§18.3); on streams the framer already cut the body to length.
 */
export function validateRaw(raw: string, datagram: boolean): Verdict {
  const parts = splitMessage(raw);
  if (!parts) return drop('no end of header section');
  const req = REQUEST_LINE.exec(parts.startLine);
  const res = req ? null : STATUS_LINE.exec(parts.startLine);
  const bad = (reason: string): Verdict => (req ? reject(400, reason) : drop(reason));
  if (!req && !res) {
    // Looks like a request but its line is malformed (extra or trailing spaces, LWS in the URI):
    // 400, or 505 when the version is not 2.0 (RFC 4475 §3.1.2.11-13, §3.3.15).
    const loose = LOOSE_REQUEST_LINE.exec(parts.startLine);
    if (loose)
      return loose[1] === '2.0'
        ? reject(400, 'Malformed Request-Line')
        : reject(505, 'Version Not Supported');
    return /^SIP\//.test(parts.startLine) ? drop('malformed status line') : drop('malformed start line');
  }
  if (req && (req[3] !== '2' || req[4] !== '0')) return reject(505, 'Version Not Supported');
  if (res) {
    if (res[1] !== '2' || res[2] !== '0') return drop('unsupported SIP version');
    const status = Number(res[3]);
    if (status < 100 || status > 699) return drop('status code out of range');
  }
  const requestUri = req ? (req[2] as string) : '';
  if (req && !SCHEME_URI.test(requestUri)) return reject(400, 'Malformed Request-URI');
  if (req && /[<>"]/.test(requestUri)) return reject(400, 'Malformed Request-URI');
  // Headers in a SIP Request-URI are meaningless to a server (RFC 3261 §19.1.5; RFC 4475 escruri).
  const scheme = uriScheme(requestUri);
  if (
    req &&
    (scheme === 'sip' || scheme === 'sips') &&
    requestUri.slice(requestUri.lastIndexOf('@') + 1).includes('?')
  )
    return reject(400, 'Headers In Request-URI');

  // One pass over the header lines: names and values in order (for the byte rules), the first
  // value of the headers read once, and the lists checked entry by entry below.
  const names: string[] = [];
  const values: string[] = [];
  let present = 0;
  let repeated = 0;
  const first = NO_VALUES.slice();
  for (const line of parts.headers) {
    const h = headerLine(line);
    if (!h) return bad('Malformed header line');
    const [name, value] = h;
    names.push(name);
    values.push(value);
    const bit = CHECKED_BITS.get(name);
    if (bit === undefined) continue;
    if (present & (1 << bit)) repeated |= 1 << bit;
    else {
      present |= 1 << bit;
      first[bit] = value;
    }
  }
  if (req) {
    const p = requestProblem(req[1] as string, requestUri, parts.startLine, names, values, parts.body);
    if (p) return reject(p.status, p.reason);
  } else if (controlIn(parts.startLine) === 'bare' || values.some((v) => controlIn(v) === 'bare'))
    return drop('control character in a response');
  for (const name of SINGLE) {
    if (repeated & (1 << bitOf(name))) return bad(`Duplicate ${name} header`);
  }
  for (const name of REQUIRED) {
    if (!(present & (1 << bitOf(name)))) return bad(`Missing ${name} header`);
  }
  const one = (name: CheckedHeader) => first[bitOf(name)];
  const each = (name: CheckedHeader, check: (v: string) => Verdict | null): Verdict | null => {
    if (!(repeated & (1 << bitOf(name)))) {
      const v = one(name);
      return v === undefined ? null : check(v);
    }
    for (let i = 0; i < names.length; i++) {
      if (names[i] !== name) continue;
      const verdict = check(values[i] as string);
      if (verdict) return verdict;
    }
    return null;
  };

  const viaProblem = each('via', (v) => {
    for (const parm of splitList(v)) {
      if (!VIA_PARM.test(parm)) return bad('Malformed Via');
      // The magic cookie alone is no branch at all (RFC 4475 §3.1.2.18).
      if (BARE_COOKIE.test(parm)) return bad('Malformed Via branch');
    }
    return null;
  });
  if (viaProblem) return viaProblem;
  const cseq = CSEQ.exec(one('cseq') ?? '');
  if (!cseq || Number(cseq[1]) > MAX_INT32) return bad('Malformed CSeq');
  // A method we do not implement gets 501 even when its CSeq disagrees (RFC 4475 §3.1.2.16).
  if (req && cseq[2] !== req[1] && KNOWN_METHODS.has(req[1] as string))
    return reject(400, 'CSeq method does not match the request method');
  if (!NO_SPACE.test(one('call-id') ?? '')) return bad('Malformed Call-ID');
  if (nameAddrUri(one('to') ?? '') === null) return bad('Malformed to header');
  if (nameAddrUri(one('from') ?? '') === null) return bad('Malformed from header');
  const mf = one('max-forwards');
  if (mf !== undefined && (!/^\d{1,10}$/.test(mf) || Number(mf) > 255)) return bad('Malformed Max-Forwards');
  const expires = one('expires');
  if (expires !== undefined && (!DIGITS.test(expires) || Number(expires) > MAX_INT32))
    return bad('Malformed Expires');
  const contactProblem = each('contact', (v) => {
    if (v === '*') return null;
    for (const c of splitList(v)) {
      if (nameAddrUri(c) === null) return bad('Malformed Contact');
      const exp = contactExpires(c);
      if (exp !== undefined && (!DIGITS.test(exp) || Number(exp) > MAX_INT32))
        return bad('Malformed Contact');
    }
    return null;
  });
  if (contactProblem) return contactProblem;
  for (const name of ['route', 'record-route'] as const) {
    const routeProblem = each(name, (v) => {
      for (const r of splitList(v)) if (nameAddrUri(r) === null) return bad(`Malformed ${name}`);
      return null;
    });
    if (routeProblem) return routeProblem;
  }
  const cl = one('content-length');
  if (cl !== undefined) {
    if (!DIGITS.test(cl)) return bad('Malformed Content-Length');
    if (datagram && Number(cl) > parts.body.length) return bad('Content-Length larger than the message');
  }
  const ct = one('content-type');
  if (ct !== undefined && !CONTENT_TYPE.test(ct)) return bad('Malformed Content-Type');
  return {
    kind: 'ok',
    message: { method: req ? (req[1] as string) : null, requestUri, names, values, body: parts.body },
  };
}

/** The `expires` parameter of one Contact entry (after its URI), as written; undefined without one. */
export function contactExpires(entry: string): string | undefined {
  return CONTACT_EXPIRES.exec(entry.slice(entry.lastIndexOf('>') + 1))?.[1];
}
const BARE_COOKIE = /;[ \t]*branch[ \t]*=[ \t]*z9hG4bK[ \t]*(?:;|$)/;
const CSEQ = /^(\d+)[ \t]+(\S+)$/;
const NO_SPACE = /^\S+$/;
const DIGITS = /^\d+$/;
const CONTACT_EXPIRES = /;[ \t]*expires[ \t]*=[ \t]*([^;\s]*)/i;
