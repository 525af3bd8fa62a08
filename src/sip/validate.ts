/**
 * Strict checks on a raw SIP message before it is parsed (RFC 3261 §7, §8.2, §25 grammar; the
 * outcome classes of RFC 4475). The `sip` package's parser is lenient and drops what it cannot
 * read; a server must instead answer a broken request with 400 (or 505 for another SIP version)
 * and silently drop a broken response (§18.1.2 / RFC 4475 §3.1.2).
 *
 * Input is a latin1 string (one byte per char), exactly as it came off the wire.
 */
import { newTag } from './message.js';
import { uriScheme } from './sip-uri.js';
import { controlIn, requestProblem } from './wire-rules.js';

export type Verdict =
  | { readonly kind: 'ok' }
  | { readonly kind: 'reject'; readonly status: number; readonly reason: string }
  | { readonly kind: 'drop'; readonly reason: string };

const TOKEN = "[A-Za-z0-9\\-.!%*_+`'~]+";
const TOKEN_RE = new RegExp(`^${TOKEN}$`);
const REQUEST_LINE = new RegExp(`^(${TOKEN}) (\\S+) SIP/(\\d+)\\.(\\d+)$`);
const LOOSE_REQUEST_LINE = new RegExp(`^${TOKEN}[ \\t]+.*[ \\t]SIP/(\\d+\\.\\d+)[ \\t]*$`);
const STATUS_LINE = /^SIP\/(\d+)\.(\d+) (\d{3}) ([^\r\n]*)$/;
const HEADER_LINE = new RegExp(`^(${TOKEN})[ \\t]*:[ \\t]*(.*)$`, 's');
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
const SINGLE = new Set([
  'to',
  'from',
  'call-id',
  'cseq',
  'max-forwards',
  'content-length',
  'content-type',
  'expires',
]);
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
  readonly headers: readonly string[];
  readonly body: string;
}

/** Splits head and body and unfolds header lines; null when there is no blank line. */
function split(raw: string): Parsed | null {
  const text = raw.replace(/^(?:\r\n)+/, '');
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return null;
  return splitAt(text, end);
}

function splitAt(text: string, end: number): Parsed {
  const lines = text.slice(0, end).split('\r\n');
  const startLine = lines.shift() ?? '';
  const headers: string[] = [];
  for (const line of lines) {
    // Folded continuation lines join the header before them (§7.3.1).
    if (/^[ \t]/.test(line) && headers.length > 0) headers[headers.length - 1] += ` ${line.trim()}`;
    else headers.push(line);
  }
  return { startLine, headers, body: text.slice(end + 4) };
}

/** Header name (lower case, compact forms expanded) and value; null for a malformed line. */
function header(line: string): readonly [string, string] | null {
  const m = HEADER_LINE.exec(line);
  if (!m) return null;
  const name = (m[1] as string).toLowerCase();
  return [COMPACT[name] ?? name, (m[2] as string).trim()];
}

const VIA_PARM = new RegExp(
  `^SIP[ \\t]*/[ \\t]*2\\.0[ \\t]*/[ \\t]*${TOKEN}[ \\t]+(?:\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9\\-.]+)(?:[ \\t]*:[ \\t]*\\d{1,5})?` +
    `(?:[ \\t]*;[ \\t]*${TOKEN}(?:[ \\t]*=[ \\t]*(?:${TOKEN}|\\[[0-9A-Fa-f:.]+\\]|"(?:[^"\\\\]|\\\\.)*"))?)*$`,
);

/** Splits a header value at commas outside quotes and angle brackets. */
export function splitList(value: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let cur = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i] as string;
    if (quoted) {
      cur += c;
      if (c === '\\') cur += value[++i] ?? '';
      else if (c === '"') quoted = false;
      continue;
    }
    if (c === '"') quoted = true;
    else if (c === '<') depth++;
    else if (c === '>') depth--;
    if (c === ',' && depth === 0) {
      out.push(cur.trim());
      cur = '';
    } else cur += c;
  }
  out.push(cur.trim());
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
  const parts = split(raw);
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

  const seen = new Map<string, string[]>();
  const pairs: (readonly [string, string])[] = [];
  for (const line of parts.headers) {
    const h = header(line);
    if (!h) return bad('Malformed header line');
    pairs.push(h);
    const list = seen.get(h[0]) ?? [];
    list.push(h[1]);
    seen.set(h[0], list);
  }
  if (req) {
    const p = requestProblem(req[1] as string, requestUri, parts.startLine, pairs, parts.body);
    if (p) return reject(p.status, p.reason);
  } else if (controlIn(parts.startLine) === 'bare' || pairs.some(([, v]) => controlIn(v) === 'bare'))
    return drop('control character in a response');
  for (const name of SINGLE) {
    if ((seen.get(name)?.length ?? 0) > 1) return bad(`Duplicate ${name} header`);
  }
  const one = (name: string) => seen.get(name)?.[0];
  for (const name of ['via', 'to', 'from', 'call-id', 'cseq']) {
    if (!seen.has(name)) return bad(`Missing ${name} header`);
  }

  for (const v of seen.get('via') ?? []) {
    for (const parm of splitList(v)) {
      if (!VIA_PARM.test(parm)) return bad('Malformed Via');
      // The magic cookie alone is no branch at all (RFC 4475 §3.1.2.18).
      if (/;[ \t]*branch[ \t]*=[ \t]*z9hG4bK[ \t]*(?:;|$)/.test(parm)) return bad('Malformed Via branch');
    }
  }
  const cseq = /^(\d+)[ \t]+(\S+)$/.exec(one('cseq') ?? '');
  if (!cseq || Number(cseq[1]) > MAX_INT32) return bad('Malformed CSeq');
  // A method we do not implement gets 501 even when its CSeq disagrees (RFC 4475 §3.1.2.16).
  if (req && cseq[2] !== req[1] && KNOWN_METHODS.has(req[1] as string))
    return reject(400, 'CSeq method does not match the request method');
  if (!/^\S+$/.test(one('call-id') ?? '')) return bad('Malformed Call-ID');
  for (const name of ['to', 'from']) {
    if (nameAddrUri(one(name) ?? '') === null) return bad(`Malformed ${name} header`);
  }
  const mf = one('max-forwards');
  if (mf !== undefined && (!/^\d{1,10}$/.test(mf) || Number(mf) > 255)) return bad('Malformed Max-Forwards');
  const expires = one('expires');
  if (expires !== undefined && (!/^\d+$/.test(expires) || Number(expires) > MAX_INT32))
    return bad('Malformed Expires');
  for (const v of seen.get('contact') ?? []) {
    if (v === '*') continue;
    for (const c of splitList(v)) {
      if (nameAddrUri(c) === null) return bad('Malformed Contact');
      const exp = /;[ \t]*expires[ \t]*=[ \t]*([^;\s]*)/i.exec(c.slice(c.lastIndexOf('>') + 1));
      if (exp && (!/^\d+$/.test(exp[1] as string) || Number(exp[1]) > MAX_INT32))
        return bad('Malformed Contact');
    }
  }
  for (const name of ['route', 'record-route']) {
    for (const v of seen.get(name) ?? [])
      for (const r of splitList(v)) if (nameAddrUri(r) === null) return bad(`Malformed ${name}`);
  }
  const cl = one('content-length');
  if (cl !== undefined) {
    if (!/^\d+$/.test(cl)) return bad('Malformed Content-Length');
    if (datagram && Number(cl) > parts.body.length) return bad('Content-Length larger than the message');
  }
  const ct = one('content-type');
  if (ct !== undefined && !CONTENT_TYPE.test(ct)) return bad('Malformed Content-Type');
  return { kind: 'ok' };
}

/**
 * A response built from the raw request text, for requests the stack could not or should not parse:
 * Via, From, To (plus a tag), Call-ID and CSeq copied as they are (RFC 3261 §8.2.6). Null when the
 * request lacks what a response needs to find its way back.
 */
export function statelessResponse(raw: string, status: number, reason: string): string | null {
  const parts = split(raw);
  if (!parts) return null;
  const copy: string[] = [];
  let hasVia = false;
  for (const line of parts.headers) {
    const h = header(line);
    if (!h) continue;
    const [name, value] = h;
    if (name === 'via') hasVia = true;
    if (name === 'to') copy.push(`To: ${/;\s*tag=/i.test(value) ? value : `${value};tag=${newTag()}`}`);
    else if (name === 'via' || name === 'from' || name === 'call-id' || name === 'cseq')
      copy.push(
        `${name === 'call-id' ? 'Call-ID' : name === 'cseq' ? 'CSeq' : name[0]?.toUpperCase() + name.slice(1)}: ${value}`,
      );
  }
  if (!hasVia) return null;
  return `SIP/2.0 ${status} ${reason}\r\n${copy.join('\r\n')}\r\nContent-Length: 0\r\n\r\n`;
}
