/**
 * A small, strict SIP URI model with its parser and serializer (RFC 3261 §19.1 and the grammar of
 * §25.1). The `name-addr` form around it (From, To, Contact, Route) is in name-addr.ts.
 *
 * Decisions, where the RFC leaves room or the model needs one:
 * - Schemes `sip`, `sips` and `tel` (RFC 3966) only; the scheme is case-insensitive and stored lower-case.
 * - Components are stored percent-decoded (`sip:alice%40home@h` has user `alice@home`) and
 *   re-escaped by {@link formatSipUri} only where the component grammar requires it, so
 *   `parse → format` normalises needless escapes (`%61` → `a`). Escapes must be valid UTF-8.
 * - IPv6 hosts are stored without brackets (`::1`); the serializer adds them back. Host case is kept.
 * - URI parameter names are case-insensitive (§19.1.4), so they are stored lower-case; values keep
 *   their case. A parameter without a value (`;lr`) is `null`.
 * - Header names (`?Subject=x`) keep their spelling; they are compared case-insensitively.
 * - A parameter or header that appears twice is rejected: the model holds one value per name.
 * - `tel` URIs keep the subscriber number in `user` and have an empty `host`; a local number needs a
 *   `phone-context` (RFC 3966 §5.1.5). They take no headers.
 * - Records are created without a prototype so names such as `__proto__` are plain keys.
 *
 * Errors are {@link SipUriError}s whose `reason` says what is wrong; the message never repeats the
 * input, which may hold a password.
 */

/** A parsed SIP, SIPS or tel URI (RFC 3261 §19.1.1; RFC 3966 for `tel`). */
export interface SipUri {
  scheme: 'sip' | 'sips' | 'tel';
  /** Percent-decoded user part; for `tel`, the subscriber number. */
  user?: string;
  /** Percent-decoded password (NOT RECOMMENDED by RFC 3261 §19.1.1, accepted for completeness). */
  password?: string;
  /** Hostname, IPv4 address, or IPv6 address without brackets; empty for `tel`. */
  host: string;
  port?: number;
  /** URI parameters by lower-case name; `null` for a parameter without a value (`;lr`). */
  params: Record<string, string | null>;
  /** URI headers (`?Subject=hi&Priority=urgent`), percent-decoded (RFC 3261 §19.1.5). */
  headers: Record<string, string>;
}

/** Malformed SIP URI or name-addr; `reason` is the first problem found. */
export class SipUriError extends Error {
  override readonly name = 'SipUriError';
  constructor(readonly reason: string) {
    super(`invalid SIP URI: ${reason}`);
  }
}

// Character sets of RFC 3261 §25.1 (besides `%HH` escapes), as regular expression classes.
const UNRESERVED = "A-Za-z0-9\\-_.!~*'()";
const USER_CHARS = `${UNRESERVED}&=+$,;?/`;
const PASSWORD_CHARS = `${UNRESERVED}&=+$,`;
const PARAM_CHARS = `${UNRESERVED}\\[\\]/:&+$`;
const HEADER_CHARS = `${UNRESERVED}\\[\\]/?:+$`;

const component = (chars: string): RegExp => new RegExp(`^(?:[${chars}]|%[0-9A-Fa-f]{2})*$`);
const USER_RE = component(USER_CHARS);
const PASSWORD_RE = component(PASSWORD_CHARS);
const PARAM_RE = component(PARAM_CHARS);
const HEADER_RE = component(HEADER_CHARS);
/** A set's test for one character, and for a whole text that needs no escape at all. */
interface Allowed {
  readonly char: RegExp;
  readonly all: RegExp;
}
const single = (chars: string): Allowed => ({
  char: new RegExp(`^[${chars}]$`),
  all: new RegExp(`^[${chars}]*$`),
});
const USER_CHAR = single(USER_CHARS);
const PASSWORD_CHAR = single(PASSWORD_CHARS);
const PARAM_CHAR = single(PARAM_CHARS);
const HEADER_CHAR = single(HEADER_CHARS);

// RFC 3261 host names have no `_`, but container and service names do (`my_host`, `_sip._udp`
// labels) and peers send them: accepted inside labels, as the `sip` stack did.
const HOSTNAME_RE =
  /^(?:[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?\.)*[A-Za-z_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?\.?$/;
const IPV4_RE = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
const HEX4_RE = /^[0-9A-Fa-f]{1,4}$/;
const GLOBAL_NUMBER_RE = /^\+[\d\-.()]*\d[\d\-.()]*$/;
const LOCAL_NUMBER_RE = /^[\dA-Fa-f*#\-.()]*[\dA-Fa-f*#][\dA-Fa-f*#\-.()]*$/;
const TEL_PNAME_RE = /^[A-Za-z0-9-]+$/;
const SCHEME_RE = /^([A-Za-z][A-Za-z0-9+.-]*):/;

const record = <T>(): Record<string, T> => Object.create(null) as Record<string, T>;

function isIPv4(s: string): boolean {
  const m = IPV4_RE.exec(s);
  if (!m) return false;
  for (let i = 1; i <= 4; i++) if (Number(m[i]) > 255) return false;
  return true;
}

/** IPv6 text form of RFC 4291 §2.2 (with `::` and an optional trailing IPv4); no zone ids. */
export function isIPv6(s: string): boolean {
  let text = s;
  const lastColon = s.lastIndexOf(':');
  if (lastColon === -1) return false;
  const tail = s.slice(lastColon + 1);
  if (tail.includes('.')) {
    if (!isIPv4(tail)) return false;
    text = `${s.slice(0, lastColon + 1)}0:0`; // the IPv4 tail counts as two groups
  }
  const halves = text.split('::');
  if (halves.length > 2) return false;
  const groups = (part: string | undefined): string[] => (part ? part.split(':') : []);
  if (halves.length === 1) {
    const all = groups(halves[0]);
    return all.length === 8 && all.every((g) => HEX4_RE.test(g));
  }
  const both = [...groups(halves[0]), ...groups(halves[1])];
  return both.length <= 7 && both.every((g) => HEX4_RE.test(g));
}

function checkHost(host: string): void {
  if (host === '') throw new SipUriError('missing host');
  if (host.includes(':')) {
    if (!isIPv6(host)) throw new SipUriError('invalid IPv6 address');
    return;
  }
  if (host.length > 255 || !(isIPv4(host) || HOSTNAME_RE.test(host))) throw new SipUriError('invalid host');
}

function checkPort(port: number): void {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new SipUriError('port must be 1 to 65535');
}

function decode(raw: string, re: RegExp, what: string): string {
  if (!re.test(raw)) throw new SipUriError(`invalid character in ${what}`);
  // Most components carry no escape: nothing to decode.
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new SipUriError(`invalid escape in ${what} (not UTF-8)`);
  }
}

function encode(value: string, allowed: Allowed): string {
  // Most values need no escape: every character allowed as it is.
  if (allowed.all.test(value)) return value;
  let out = '';
  for (const ch of value) {
    if (allowed.char.test(ch)) out += ch;
    else {
      try {
        out += encodeURIComponent(ch); // leaves the RFC 3261 `unreserved` set alone, like `allowed`
      } catch {
        throw new SipUriError('value is not well-formed Unicode');
      }
    }
  }
  return out;
}

function parseParams(raw: string | undefined, into: Record<string, string | null>): void {
  if (raw === undefined) return;
  for (const part of raw.split(';')) {
    const eq = part.indexOf('=');
    const rawName = eq === -1 ? part : part.slice(0, eq);
    if (rawName === '') throw new SipUriError('empty parameter name');
    const name = decode(rawName, PARAM_RE, 'parameter name').toLowerCase();
    if (name in into) throw new SipUriError(`duplicate parameter "${name}"`);
    if (eq === -1) into[name] = null;
    else {
      const rawValue = part.slice(eq + 1);
      if (rawValue === '') throw new SipUriError(`empty value for parameter "${name}"`);
      into[name] = decode(rawValue, PARAM_RE, `parameter "${name}"`);
    }
  }
}

/**
 * Parses the headers part of a URI, the text after `?` (RFC 3261 §19.1.1 `headers`):
 * `Subject=hi%20there&Priority=urgent`. Also used for the `client:<name>?<Header>=<value>` To form.
 * Names are required, values may be empty, duplicates (case-insensitive) are rejected.
 * @throws SipUriError
 */
export function parseUriHeaders(text: string): Record<string, string> {
  const headers = record<string>();
  const seen = new Set<string>();
  if (text === '') throw new SipUriError('empty headers part');
  for (const part of text.split('&')) {
    const eq = part.indexOf('=');
    if (eq === -1) throw new SipUriError('header without "="');
    const name = decode(part.slice(0, eq), HEADER_RE, 'header name');
    if (name === '') throw new SipUriError('empty header name');
    if (seen.has(name.toLowerCase())) throw new SipUriError(`duplicate header "${name}"`);
    seen.add(name.toLowerCase());
    headers[name] = decode(part.slice(eq + 1), HEADER_RE, `header "${name}"`);
  }
  return headers;
}

function parseTel(rest: string): SipUri {
  if (rest.includes('?')) throw new SipUriError('tel URIs take no headers');
  const [number = '', ...rawParams] = rest.split(';');
  const params = record<string | null>();
  for (const part of rawParams) {
    const eq = part.indexOf('=');
    const name = (eq === -1 ? part : part.slice(0, eq)).toLowerCase();
    if (!TEL_PNAME_RE.test(name)) throw new SipUriError('invalid tel parameter name');
    if (name in params) throw new SipUriError(`duplicate parameter "${name}"`);
    if (eq === -1) params[name] = null;
    else {
      const rawValue = part.slice(eq + 1);
      if (rawValue === '') throw new SipUriError(`empty value for parameter "${name}"`);
      params[name] = decode(rawValue, PARAM_RE, `parameter "${name}"`);
    }
  }
  checkTelNumber(number, params);
  return { scheme: 'tel', user: number, host: '', params, headers: record<string>() };
}

function checkTelNumber(number: string, params: Record<string, string | null>): void {
  if (number === '') throw new SipUriError('missing telephone number');
  if (GLOBAL_NUMBER_RE.test(number)) return;
  if (!LOCAL_NUMBER_RE.test(number)) throw new SipUriError('invalid telephone number');
  if (params['phone-context'] == null) throw new SipUriError('a local tel number needs phone-context');
}

/**
 * Parses a `sip:`, `sips:` or `tel:` URI (RFC 3261 §19.1.1, §25.1; RFC 3966 §3).
 *
 * @example parseSipUri('sip:alice@[::1]:5060;transport=tcp;lr?Subject=hi')
 * @throws SipUriError with the first problem as `reason`
 */
export function parseSipUri(text: string): SipUri {
  const scheme = SCHEME_RE.exec(text);
  if (!scheme) throw new SipUriError('missing scheme');
  const name = scheme[1]!.toLowerCase();
  const rest = text.slice(scheme[0].length);
  if (name === 'tel') return parseTel(rest);
  if (name !== 'sip' && name !== 'sips') throw new SipUriError(`unsupported scheme "${name}"`);

  // `@` is allowed unescaped in no component, so at most one separates userinfo from hostport.
  const at = rest.indexOf('@');
  if (at !== -1 && rest.indexOf('@', at + 1) !== -1)
    throw new SipUriError('more than one "@" (escape as %40)');
  const uri: SipUri = { scheme: name, host: '', params: record(), headers: record() };
  if (at !== -1) {
    const userinfo = rest.slice(0, at);
    const colon = userinfo.indexOf(':');
    const rawUser = colon === -1 ? userinfo : userinfo.slice(0, colon);
    if (rawUser === '') throw new SipUriError('empty user');
    uri.user = decode(rawUser, USER_RE, 'user');
    if (colon !== -1) uri.password = decode(userinfo.slice(colon + 1), PASSWORD_RE, 'password');
  }

  let main = at === -1 ? rest : rest.slice(at + 1);
  const q = main.indexOf('?');
  if (q !== -1) {
    uri.headers = parseUriHeaders(main.slice(q + 1));
    main = main.slice(0, q);
  }

  let afterHost: string;
  if (main.startsWith('[')) {
    const close = main.indexOf(']');
    if (close === -1) throw new SipUriError('unterminated IPv6 reference');
    uri.host = main.slice(1, close);
    if (!uri.host.includes(':')) throw new SipUriError('invalid IPv6 address');
    afterHost = main.slice(close + 1);
    if (afterHost !== '' && afterHost[0] !== ':' && afterHost[0] !== ';') {
      throw new SipUriError('unexpected text after IPv6 reference');
    }
  } else {
    const end = main.search(/[:;]/);
    uri.host = end === -1 ? main : main.slice(0, end);
    afterHost = end === -1 ? '' : main.slice(end);
  }
  checkHost(uri.host);

  const semi = afterHost.indexOf(';');
  const portText = semi === -1 ? afterHost : afterHost.slice(0, semi);
  if (portText !== '') {
    if (!/^:\d{1,5}$/.test(portText)) throw new SipUriError('invalid port');
    uri.port = Number(portText.slice(1));
    checkPort(uri.port);
  }
  parseParams(semi === -1 ? undefined : afterHost.slice(semi + 1), uri.params);
  return uri;
}

/**
 * The lower-case scheme of an absolute URI (`sip`, `tel`, `mailto`, ...), or undefined when the
 * text does not start with one (RFC 3986 §3.1): what a server checks before answering 416.
 */
export function uriScheme(text: string): string | undefined {
  return SCHEME_RE.exec(text)?.[1]?.toLowerCase();
}

/**
 * A proxy or registrar as an operator writes it (a Gateway's `Proxy`): a whole `sip:`/`sips:` URI,
 * or the short forms `host`, `host:port`, `[v6]:port` (with parameters or not), which stand for
 * `sip:<text>`.
 * @throws SipUriError
 */
export function parseHostOrSipUri(text: string): SipUri {
  const scheme = uriScheme(text);
  return parseSipUri(scheme === 'sip' || scheme === 'sips' ? text : `sip:${text}`);
}

/**
 * `sip:[user@]host[:port][;params]` for a host we advertise or were given as plain text (an IPv6
 * address with or without brackets): the user escaped only where its grammar requires it.
 * @throws SipUriError when the host, port or a parameter cannot be written in a URI
 */
export function formatSipAddress(
  user: string | undefined,
  host: string,
  options: { readonly port?: number | undefined; readonly params?: Record<string, string | null> } = {},
): string {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const uri: SipUri = { scheme: 'sip', host: bare, params: options.params ?? {}, headers: {} };
  if (user !== undefined) uri.user = user;
  if (options.port !== undefined) uri.port = options.port;
  return formatSipUri(uri);
}

function formatParams(params: Record<string, string | null>): string {
  let out = '';
  for (const [name, value] of Object.entries(params)) {
    if (name === '') throw new SipUriError('empty parameter name');
    out += `;${encode(name, PARAM_CHAR)}`;
    if (value !== null) {
      if (value === '') throw new SipUriError(`empty value for parameter "${name}"`);
      out += `=${encode(value, PARAM_CHAR)}`;
    }
  }
  return out;
}

/**
 * Serializes a URI, escaping each component as its grammar requires (RFC 3261 §19.1.2) and
 * bracketing IPv6 hosts. Validates the model on the way.
 * @throws SipUriError when the model cannot be written as a valid URI
 */
export function formatSipUri(uri: SipUri): string {
  if (uri.scheme === 'tel') {
    if (Object.keys(uri.headers).length > 0) throw new SipUriError('tel URIs take no headers');
    checkTelNumber(uri.user ?? '', uri.params);
    return `tel:${uri.user}${formatParams(uri.params)}`;
  }
  if (uri.scheme !== 'sip' && uri.scheme !== 'sips') throw new SipUriError('unsupported scheme');
  let out = `${uri.scheme}:`;
  if (uri.user !== undefined) {
    if (uri.user === '') throw new SipUriError('empty user');
    out += encode(uri.user, USER_CHAR);
    if (uri.password !== undefined) out += `:${encode(uri.password, PASSWORD_CHAR)}`;
    out += '@';
  } else if (uri.password !== undefined) {
    throw new SipUriError('password without user');
  }
  checkHost(uri.host);
  out += uri.host.includes(':') ? `[${uri.host}]` : uri.host;
  if (uri.port !== undefined) {
    checkPort(uri.port);
    out += `:${uri.port}`;
  }
  out += formatParams(uri.params);
  const headers = Object.entries(uri.headers);
  if (headers.length > 0) {
    out += `?${headers
      .map(([name, value]) => {
        if (name === '') throw new SipUriError('empty header name');
        return `${encode(name, HEADER_CHAR)}=${encode(value, HEADER_CHAR)}`;
      })
      .join('&')}`;
  }
  return out;
}
