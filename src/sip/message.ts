/**
 * The SIP message model src/sip speaks: the `sip` package's plain objects (lower-case header names,
 * latin1 strings), typed, plus the helpers every layer needs. Messages are data: clone before you
 * change one that somebody else holds (the transaction layer keeps and re-sends what it is given).
 */

import type { StackHeaders, StackMessage, StackNameAddr, StackUri } from 'sip';
import * as stack from 'sip';
import { randomHex } from '../ids.js';
import { parseSipUri, type SipUri, SipUriError } from './sip-uri.js';

export type { StackHeaders as SipHeaders, StackNameAddr as NameAddr, StackUri };

export interface SipRequest extends StackMessage {
  method: string;
  uri: string;
}
export interface SipResponse extends StackMessage {
  status: number;
  reason: string;
}
export type SipMessage = SipRequest | SipResponse;

export const isRequest = (m: StackMessage): m is SipRequest => typeof m.method === 'string';

/** Reason phrases we send (RFC 3261 §21 and extensions). */
export const ReasonPhrase: Readonly<Record<number, string>> = {
  100: 'Trying',
  180: 'Ringing',
  181: 'Call Is Being Forwarded',
  182: 'Queued',
  183: 'Session Progress',
  200: 'OK',
  202: 'Accepted',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  407: 'Proxy Authentication Required',
  408: 'Request Timeout',
  415: 'Unsupported Media Type',
  416: 'Unsupported URI Scheme',
  420: 'Bad Extension',
  423: 'Interval Too Brief',
  480: 'Temporarily Unavailable',
  481: 'Call/Transaction Does Not Exist',
  489: 'Bad Event',
  482: 'Loop Detected',
  483: 'Too Many Hops',
  484: 'Address Incomplete',
  486: 'Busy Here',
  487: 'Request Terminated',
  488: 'Not Acceptable Here',
  491: 'Request Pending',
  500: 'Server Internal Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
  504: 'Server Time-out',
  505: 'Version Not Supported',
  600: 'Busy Everywhere',
  603: 'Decline',
  604: 'Does Not Exist Anywhere',
};

/** Methods this service implements; the Allow header of 405/501 and OPTIONS answers. */
export const ALLOWED_METHODS = [
  'INVITE',
  'ACK',
  'CANCEL',
  'BYE',
  'OPTIONS',
  'REGISTER',
  'MESSAGE',
  'INFO',
  'REFER',
  'NOTIFY',
] as const;
export const ALLOW_HEADER = ALLOWED_METHODS.join(', ');

export const newTag = (): string => randomHex(6);
export const newCallId = (host: string): string => `${randomHex(12)}@${host}`;
export const newBranch = (): string => `z9hG4bK${randomHex(9)}`;

/**
 * Deep copy of message data (plain objects, arrays, strings, numbers), as structuredClone would
 * make it but several times cheaper: every response and request sent is copied once or twice.
 * Anything that is not plain data goes to structuredClone.
 */
function clonePlain<T>(v: T): T {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) return v.map(clonePlain) as T;
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return structuredClone(v);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const x = clonePlain((v as Record<string, unknown>)[k]);
    // A peer may name a parameter `__proto__`: an own key, as structuredClone keeps it.
    if (k === '__proto__')
      Object.defineProperty(out, k, { value: x, enumerable: true, writable: true, configurable: true });
    else out[k] = x;
  }
  return out as T;
}

/** Deep copy: `send()` and the transaction layer mutate what they are given. */
export function cloneMessage<T extends StackMessage>(m: T): T {
  return clonePlain(m);
}

export interface ResponseOptions {
  reason?: string;
  toTag?: string;
  headers?: Record<string, unknown>;
  content?: string;
}

/**
 * A response to `rq`. Every final or provisional response other than 100 carries a To-tag
 * (RFC 3261 §8.2.6.2; the `sip` package leaves it out): `toTag` when the dialog has one, else a
 * fresh one. Headers of `rq` are copied, not shared.
 */
export function makeResponse(rq: SipRequest, status: number, options: ResponseOptions = {}): SipResponse {
  const to = rq.headers.to;
  const tagged = status > 100 && to && !to.params?.tag;
  const rs: SipResponse = {
    status,
    reason: options.reason ?? ReasonPhrase[status] ?? 'Unknown',
    version: '2.0',
    headers: {
      via: clonePlain(rq.headers.via),
      to: tagged
        ? { ...clonePlain(to), params: { ...(to.params ?? {}), tag: options.toTag ?? newTag() } }
        : clonePlain(to),
      from: clonePlain(rq.headers.from),
      'call-id': rq.headers['call-id'],
      cseq: { ...rq.headers.cseq },
    },
  };
  // A response that can establish a dialog carries the request's Record-Route (RFC 3261 §12.1.1): a
  // record-routing proxy in front (Kamailio) then stays on the path of the caller's ACK and BYE.
  if (status > 100 && status < 300 && rq.headers['record-route']?.length) {
    rs.headers['record-route'] = clonePlain(rq.headers['record-route']);
  }
  if (options.headers) Object.assign(rs.headers, options.headers);
  if (options.content !== undefined) rs.content = options.content;
  return rs;
}

/**
 * A copy of `s` that does not keep alive the message text it was cut from. A parsed message's
 * strings are slices of the datagram, and V8 keeps a slice's whole parent: a value kept for
 * minutes (a binding's contact, seen by the supervisor's view) would keep half a kilobyte of
 * request with it. The copy is a fresh string of `s`'s length (or a slice of one).
 */
export const detached = (s: string): string => ` ${s}`.slice(1);

/** A header's value as text (generic headers are stored as strings, repeated ones comma-joined). */
export function headerText(m: StackMessage, name: string): string | undefined {
  const v = m.headers[name.toLowerCase()];
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined;
}

export const tagOf = (na: StackNameAddr | undefined): string | undefined => {
  const t = na?.params?.tag;
  return typeof t === 'string' ? t : undefined;
};

export const formatMessage = (m: StackMessage): string => stack.stringify(cloneMessage(m));

// URIs. Our code reads and writes URIs only as src/sip/sip-uri.ts models and texts. The package
// keeps From, To and Contact URIs as text, but parses Route and Record-Route entries into its own
// objects (undefined where its grammar fails) and resolves next hops from such an object (RFC 3263);
// the three functions below are the one place where the two meet.

/** A URI of a parsed message as it stood on the wire (text, or the package's object re-serialized). */
export const wireUri = (u: StackUri | string): string => stack.stringifyUri(u);

/**
 * A URI of a message (text, or the package's object, or nothing where the package's grammar failed)
 * as our model; undefined when there is none or sip-uri.ts refuses it.
 */
export function sipUriOf(u: StackUri | string | undefined): SipUri | undefined {
  if (u === undefined) return undefined;
  try {
    return parseSipUri(wireUri(u));
  } catch (e) {
    if (e instanceof SipUriError) return undefined;
    throw e;
  }
}

/**
 * Our model as the package's URI object, for its resolver only (it reads scheme, host, port and
 * transport); never serialized, since the host is unbracketed and the user unescaped.
 */
export function stackUriOf(uri: SipUri): StackUri {
  const out: StackUri = {
    schema: uri.scheme,
    host: uri.host,
    params: { ...uri.params },
    headers: { ...uri.headers },
  };
  if (uri.user !== undefined) out.user = uri.user;
  if (uri.port !== undefined) out.port = uri.port;
  return out;
}

/** `user` part of a SIP or tel URI, unescaped; undefined for URIs without one or that sip-uri.ts refuses. */
export function userOf(uri: string): string | undefined {
  return sipUriOf(uri)?.user || undefined;
}

/** X- headers of a message, named as they are usually written (`X-Agent-Id`; ours are lower case). */
export function xHeadersOf(m: StackMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(m.headers))
    if (k.startsWith('x-') && typeof v === 'string')
      out[k.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase())] = v;
  return out;
}
