/**
 * Generic checks every new request passes before the request handler sees it (RFC 3261 §8.2.2,
 * §8.2.3): Max-Forwards exhausted → 483, a Request-URI scheme we do not serve → 416, an option
 * tag in Require we do not support → 420, an INVITE body we cannot read → 415. They need the
 * request only, not the dialog or the caller, so they run in the stack, once.
 */
import type { SipRequest } from './message.js';
import { uriScheme } from './sip-uri.js';

/** Option tags we support in Require (none beyond the base spec yet). */
const SUPPORTED_EXTENSIONS = new Set<string>([]);
const SUPPORTED_SCHEMES = new Set(['sip', 'sips', 'tel']);
/**
 * INVITE bodies we read (others → 415 with Accept, RFC 3261 §21.4.13): session descriptions, and
 * USSD (3GPP TS 24.390), whose sessions SipLegs hands to the USSD runtime.
 */
const SESSION_TYPES = new Set(['application/sdp', 'application/vnd.3gpp.ussd+xml']);

/** The final response a request gets instead of reaching the request handler. */
export interface Rejection {
  readonly status: number;
  readonly headers?: Record<string, unknown>;
}

/** What the checks read of a request (a parsed one, or a REGISTER read from its text). */
export interface RequestFacts {
  readonly method: string;
  readonly uri: string;
  readonly maxForwards: string | number | undefined;
  /** Require's option tags, comma-separated. */
  readonly require: string | undefined;
  readonly contentType: string | undefined;
  readonly content: string | undefined;
}

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The answer to a request that fails a generic check, or null when it may be handled. */
export function rejectionOf(rq: SipRequest): Rejection | null {
  return rejectionFor({
    method: rq.method,
    uri: rq.uri,
    maxForwards: rq.headers['max-forwards'],
    require: text(rq.headers.require),
    contentType: text(rq.headers['content-type']),
    content: rq.content,
  });
}

/** The same checks on what was read of a request. */
export function rejectionFor(rq: RequestFacts): Rejection | null {
  const mf = rq.maxForwards;
  if (mf !== undefined && Number(mf) <= 0) return { status: 483 };
  const scheme = uriScheme(rq.uri);
  if (!scheme || !SUPPORTED_SCHEMES.has(scheme)) return { status: 416 };
  const require = rq.require ?? '';
  const unsupported = require
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s && !SUPPORTED_EXTENSIONS.has(s.toLowerCase()));
  if (unsupported.length && rq.method !== 'CANCEL')
    return { status: 420, headers: { unsupported: unsupported.join(', ') } };
  const type = (rq.contentType ?? '').split(';')[0]?.trim().toLowerCase();
  if (
    rq.method === 'INVITE' &&
    rq.content &&
    type &&
    !SESSION_TYPES.has(type) &&
    !type.startsWith('multipart/')
  )
    return { status: 415, headers: { accept: 'application/sdp' } };
  return null;
}
