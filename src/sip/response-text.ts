/**
 * A response as the `sip` package's `stringify` writes it, byte for byte, for the answers the stack
 * serializes itself at thousands a second (stateless REGISTER answers). The package's version
 * prettifies every header name with a regular expression and walks each header through a table
 * of closures; this one remembers the names and writes the headers a response carries directly.
 * A header it does not write itself (a credential header in a response: not one we send) makes
 * it hand the whole message to the package.
 */
import type { StackAuth, StackHeaders, StackNameAddr, StackRouteEntry, StackVia } from 'sip';
import * as stack from 'sip';
import type { SipResponse } from './message.js';

/** Headers the package writes with a serializer of its own that this file does not copy. */
const PACKAGE_ONLY = new Set(['authorization', 'proxy-authorization', 'authentication-info', 'refer-to']);

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

const nameAddr = (a: StackNameAddr | StackRouteEntry): string =>
  `${a.name || ''} <${stack.stringifyUri(a.uri)}>${params(a.params)}`;

function via(v: StackVia): string {
  if (!v.host) return '';
  return `Via: SIP/${v.version || '2.0'}/${v.protocol.toUpperCase()} ${v.host}${v.port ? `:${v.port}` : ''}${params(v.params)}\r\n`;
}

const list = (name: string, h: readonly (StackNameAddr | StackRouteEntry)[]): string =>
  h.length ? `${name}: ${h.map(nameAddr).join(', ')}\r\n` : '';

const challenges = (name: string, h: readonly StackAuth[]): string =>
  h.map((a) => `${name}: ${stack.stringifyAuthHeader(a)}\r\n`).join('');

/** The response's text; sets its Content-Length header, as the package's stringify does. */
export function responseText(rs: SipResponse): string {
  const h = rs.headers as StackHeaders & Record<string, unknown>;
  h['content-length'] = (rs.content || '').length;
  let s = `SIP/${rs.version || '2.0'} ${rs.status} ${rs.reason}\r\n`;
  for (const n in h) {
    const v = h[n];
    if (v === undefined) continue;
    if (typeof v === 'string') {
      s += `${prettyName(n)}: ${v}\r\n`;
      continue;
    }
    switch (n) {
      case 'via':
        for (const x of v as StackVia[]) s += via(x);
        break;
      case 'to':
        s += `To: ${nameAddr(v as StackNameAddr)}\r\n`;
        break;
      case 'from':
        s += `From: ${nameAddr(v as StackNameAddr)}\r\n`;
        break;
      case 'cseq': {
        const c = v as StackHeaders['cseq'];
        s += `CSeq: ${c.seq} ${c.method}\r\n`;
        break;
      }
      case 'contact': {
        const c = v as StackHeaders['contact'];
        s += `Contact: ${c !== '*' && c?.length ? c.map(nameAddr).join(', ') : '*'}\r\n`;
        break;
      }
      case 'route':
        s += list('Route', v as StackRouteEntry[]);
        break;
      case 'record-route':
        s += list('Record-Route', v as StackRouteEntry[]);
        break;
      case 'path':
        s += list('Path', v as StackRouteEntry[]);
        break;
      case 'www-authenticate':
        s += challenges('WWW-Authenticate', v as StackAuth[]);
        break;
      case 'proxy-authenticate':
        s += challenges('Proxy-Authenticate', v as StackAuth[]);
        break;
      default:
        if (PACKAGE_ONLY.has(n)) return stack.stringify(rs);
        s += `${prettyName(n)}: ${v}\r\n`;
    }
  }
  s += '\r\n';
  if (rs.content) s += rs.content;
  return s;
}
