/**
 * The headers our REGISTER answers add to what they copy from the request (Contact, Date,
 * Min-Expires, a challenge, Unsupported...), written as the `sip` package's `stringify` writes
 * them, byte for byte: those answers are written from text (register-request.ts), at thousands a
 * second, and the package's version prettifies every header name with a regular expression and
 * walks each header through a table of closures.
 */
import type { StackAuth, StackHeaders, StackNameAddr } from 'sip';
import * as stack from 'sip';

const names = new Map<string, string>();
const MAX_NAMES = 1_000;

/** `call-id` → `Call-ID`, else each word capitalised (the package's prettifyHeaderName). */
function prettyName(name: string): string {
  let pretty = names.get(name);
  if (pretty === undefined) {
    pretty = name === 'call-id' ? 'Call-ID' : name.replace(/\b([a-z])/g, (a) => a.toUpperCase());
    if (names.size >= MAX_NAMES) names.clear();
    names.set(name, pretty);
  }
  return pretty;
}

function params(p: Record<string, string | null> | undefined): string {
  let s = '';
  for (const n in p) s += `;${n}${p[n] ? `=${p[n]}` : ''}`;
  return s;
}

const nameAddr = (a: StackNameAddr): string =>
  `${a.name || ''} <${stack.stringifyUri(a.uri)}>${params(a.params)}`;

const challenges = (name: string, h: readonly StackAuth[]): string =>
  h.map((a) => `${name}: ${stack.stringifyAuthHeader(a)}\r\n`).join('');

/** One header's lines, each ending in CRLF; null for a structured header not written here. */
function linesOf(n: string, v: unknown): string | null {
  switch (n) {
    case 'contact': {
      const c = v as StackHeaders['contact'];
      return `Contact: ${c !== '*' && c?.length ? c.map(nameAddr).join(', ') : '*'}\r\n`;
    }
    case 'www-authenticate':
      return challenges('WWW-Authenticate', v as StackAuth[]);
    case 'proxy-authenticate':
      return challenges('Proxy-Authenticate', v as StackAuth[]);
    default:
      return typeof v === 'string' || typeof v === 'number' ? `${prettyName(n)}: ${v}\r\n` : null;
  }
}

/** The lines of `headers` (each ending in CRLF); null when one of them is not a header written here. */
export function headerLines(headers: Readonly<Record<string, unknown>> | undefined): string | null {
  let s = '';
  for (const n in headers) {
    const v = headers[n];
    if (v === undefined) continue;
    const lines = linesOf(n, v);
    if (lines === null) return null;
    s += lines;
  }
  return s;
}
