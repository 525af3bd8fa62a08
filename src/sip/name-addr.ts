/**
 * The `name-addr` / `addr-spec` form of From, To, Contact and Route values (RFC 3261 §20.10, §25.1),
 * with its header parameters, on top of the URI model of sip-uri.ts. Display names are unquoted and
 * unescaped on the way in and always quoted on the way out; errors are the model's `SipUriError`s.
 */
import { formatSipUri, isIPv6, parseSipUri, type SipUri, SipUriError } from './sip-uri.js';

/** A `name-addr` or `addr-spec` with its header parameters, e.g. `"Alice" <sip:a@b>;tag=x`. */
export interface NameAddr {
  /** Display name without quotes or escapes; absent when none was given. */
  displayName?: string;
  uri: SipUri;
  /** Header parameters (`;tag=x`, `;expires=60`) by lower-case name, unquoted; `null` without value. */
  params: Record<string, string | null>;
}

/** RFC 3261 §25.1 `token`, used by display names and header parameters. */
const TOKEN_RE = /^[A-Za-z0-9\-.!%*_+`'~]+$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
const CONTROL_RE = /[\x00-\x08\x0a-\x1f\x7f]/;

const isWs = (ch: string | undefined): boolean => ch === ' ' || ch === '\t';

/** Cursor over a header value; skips linear white space (folding was undone by the message parser). */
class Scanner {
  pos = 0;
  constructor(readonly text: string) {}
  get done(): boolean {
    return this.pos >= this.text.length;
  }
  peek(): string | undefined {
    return this.text[this.pos];
  }
  skipWs(): void {
    while (isWs(this.peek())) this.pos++;
  }
  /** A quoted-string starting at the cursor, unescaped (`\"` → `"`). */
  quoted(): string {
    this.pos++; // opening quote
    let out = '';
    for (;;) {
      const ch = this.text[this.pos++];
      if (ch === undefined) throw new SipUriError('unterminated quoted string');
      if (ch === '"') return out;
      if (ch === '\\') {
        const next = this.text[this.pos++];
        if (next === undefined || next === '\r' || next === '\n')
          throw new SipUriError('bad escape in quoted string');
        out += next;
      } else if (ch === '\r' || ch === '\n') {
        throw new SipUriError('line break in quoted string');
      } else out += ch;
    }
  }
  /** Characters up to (not including) any of `stops`, or to the end. */
  until(stops: string): string {
    const start = this.pos;
    while (!this.done && !stops.includes(this.peek()!)) this.pos++;
    return this.text.slice(start, this.pos);
  }
}

function parseHeaderParams(s: Scanner): Record<string, string | null> {
  const params = Object.create(null) as Record<string, string | null>;
  for (;;) {
    s.skipWs();
    if (s.done) return params;
    if (s.peek() !== ';') throw new SipUriError('expected ";" before a header parameter');
    s.pos++;
    s.skipWs();
    const name = s.until(' \t=;').toLowerCase();
    if (!TOKEN_RE.test(name)) throw new SipUriError('invalid header parameter name');
    if (name in params) throw new SipUriError(`duplicate parameter "${name}"`);
    s.skipWs();
    if (s.peek() !== '=') {
      params[name] = null;
      continue;
    }
    s.pos++;
    s.skipWs();
    if (s.peek() === '"') params[name] = s.quoted();
    else {
      // gen-value = token / host / quoted-string; `[` `]` `:` cover IPv6 hosts.
      const value = s.until(' \t;');
      if (!/^[A-Za-z0-9\-.!%*_+`'~[\]:]+$/.test(value)) throw new SipUriError(`invalid value for "${name}"`);
      params[name] = value;
    }
  }
}

/**
 * Parses the value of a From, To, Contact or Route header: `name-addr` (`"Alice" <sip:a@b>` or
 * `Alice <sip:a@b>`) or a bare `addr-spec`, followed by header parameters. In the bare form the
 * parameters belong to the header, and a URI with `?` headers must be bracketed (RFC 3261 §20.10).
 *
 * @example parseNameAddr('"Alice" <sip:a@b>;tag=x') // { displayName: 'Alice', uri, params: { tag: 'x' } }
 * @throws SipUriError
 */
export function parseNameAddr(text: string): NameAddr {
  const s = new Scanner(text);
  s.skipWs();
  let displayName: string | undefined;
  if (s.peek() === '"') {
    displayName = s.quoted();
    s.skipWs();
    if (s.peek() !== '<') throw new SipUriError('expected "<" after the display name');
  } else if (s.peek() !== '<') {
    const start = s.pos;
    const words = s.until('<');
    if (!s.done) {
      const name = words.trim();
      if (name !== '' && !name.split(/[ \t]+/).every((w) => TOKEN_RE.test(w))) {
        throw new SipUriError('display name must be tokens or a quoted string');
      }
      if (name !== '') displayName = name.replace(/[ \t]+/g, ' ');
    } else {
      // addr-spec: the URI ends at the first `;` that follows the host part, i.e. header params.
      s.pos = start;
      const raw = s.until(' \t;');
      if (raw.includes('?')) throw new SipUriError('a URI with headers must be enclosed in "<>"');
      const uri = parseSipUri(raw);
      return withDisplay(undefined, uri, parseHeaderParams(s));
    }
  }
  s.pos++; // `<`
  const raw = s.until('>');
  if (s.done) throw new SipUriError('missing ">"');
  s.pos++;
  const uri = parseSipUri(raw);
  return withDisplay(displayName, uri, parseHeaderParams(s));
}

function withDisplay(displayName: string | undefined, uri: SipUri, params: NameAddr['params']): NameAddr {
  return displayName === undefined ? { uri, params } : { displayName, uri, params };
}

/**
 * Serializes a {@link NameAddr}: always the bracketed form, the display name always quoted, a
 * parameter value quoted unless it is a token or host.
 * @throws SipUriError
 */
export function formatNameAddr(nameAddr: NameAddr): string {
  let out = '';
  if (nameAddr.displayName !== undefined) {
    if (CONTROL_RE.test(nameAddr.displayName)) throw new SipUriError('control character in display name');
    out += `"${nameAddr.displayName.replace(/["\\]/g, '\\$&')}" `;
  }
  out += `<${formatSipUri(nameAddr.uri)}>`;
  for (const [name, value] of Object.entries(nameAddr.params)) {
    if (!TOKEN_RE.test(name)) throw new SipUriError('invalid header parameter name');
    out += `;${name}`;
    if (value !== null) out += `=${formatGenericValue(value)}`;
  }
  return out;
}

/**
 * A header parameter value (`gen-value`, RFC 3261 §25.1): as is when it is a token or a host,
 * otherwise a quoted-string.
 * @throws SipUriError on control characters (line breaks included), which no header value may hold
 */
export function formatGenericValue(value: string): string {
  if (CONTROL_RE.test(value)) throw new SipUriError('control character in parameter value');
  if (TOKEN_RE.test(value) || (value.startsWith('[') && value.endsWith(']') && isIPv6(value.slice(1, -1)))) {
    return value;
  }
  return `"${value.replace(/["\\]/g, '\\$&')}"`;
}
