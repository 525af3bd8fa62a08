/**
 * One outgoing webhook request as bytes on the wire: the URL sent (GET parameters appended to its query),
 * the form body (POST), and the headers, signatures included. STYLE.md "serialize once, sign the exact
 * bytes": the body built here is the one sent, and both signatures cover exactly it (or the URL sent).
 */
import { encodeForm, type Params, switchboardSignature, twilioSignature } from './signing.js';
import type { HttpMethod, WebhookRequest } from './types.js';

/** Header names we send. */
export const WebhookHeader = {
  TwilioSignature: 'X-Twilio-Signature',
  SwitchboardSignature: 'X-Switchboard-Signature',
  TwilioIdempotency: 'I-Twilio-Idempotency-Token',
  SwitchboardIdempotency: 'X-Switchboard-Idempotency-Token',
} as const;

/**
 * What a request needs from the URL it is sent to, derived once per URL: a callback or markup URL is
 * sent on every request, and each `URL` getter builds a string.
 */
export interface Destination {
  /** The URL sent; `user:password@` in it travels as the Authorization header, never in the request line. */
  readonly url: URL;
  readonly href: string;
  /** The URL as the receiver reconstructs and signs it (scheme, host, path, query): no credentials. */
  readonly signed: string;
  readonly origin: string;
  /** Path and query: the request line's target. */
  readonly path: string;
  /** Basic credentials from the URL's userinfo, or null. */
  readonly authorization: string | null;
}

export function destinationOf(url: URL): Destination {
  const href = url.href;
  const hasCredentials = url.username !== '' || url.password !== '';
  return {
    url,
    href,
    signed: hasCredentials ? withoutCredentials(href) : href,
    origin: url.origin,
    path: url.pathname + url.search,
    authorization: hasCredentials ? basicAuth(url) : null,
  };
}

/** A request ready for the transport. */
export interface OutgoingRequest {
  readonly to: Destination;
  readonly method: HttpMethod;
  readonly headers: Readonly<Record<string, string>>;
  /** The form bytes (POST), or null (GET). */
  readonly body: Buffer | null;
}

/** Who is calling and when, for the headers of every request. */
export interface Sender {
  readonly userAgent: string;
  /** Signature timestamp source (ms). */
  readonly nowMs: number;
}

/** URL for a GET: the parameters appended to any existing query, which is left byte-for-byte as is. */
export function withQuery(url: URL, params: Params): URL {
  if (params.length === 0) return new URL(url.href);
  const sep = url.search ? '&' : url.href.endsWith('?') ? '' : '?';
  return new URL(url.href + sep + encodeForm(params));
}

/** The URL with any `user:password@` removed: Notification records are readable by the account's users. */
export function withoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    if (!u.username && !u.password) return url;
    u.username = '';
    u.password = '';
    return u.href;
  } catch {
    return url;
  }
}

/** Origin and path only: query strings may carry secrets, so logs never include them. */
export function loggable(url: URL | string): string {
  try {
    const u = typeof url === 'string' ? new URL(url) : url;
    return u.origin + u.pathname;
  } catch {
    return '[invalid url]';
  }
}

function decoded(component: string): string {
  try {
    return decodeURIComponent(component);
  } catch {
    return component;
  }
}

/** Basic credentials from the URL's userinfo, decoded as node:http does (RFC 7617 over UTF-8). */
function basicAuth(url: URL): string | null {
  if (!url.username && !url.password) return null;
  const pair = `${decoded(url.username)}:${decoded(url.password)}`;
  return `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`;
}

/**
 * Builds the request for one hop: `to` is the hop's destination before GET parameters are added. Each
 * call signs afresh, so a retry or a redirect carries a new timestamp and the same idempotency token.
 */
export function buildRequest(
  req: WebhookRequest,
  to: Destination,
  method: HttpMethod,
  token: string,
  sender: Sender,
): OutgoingRequest {
  const post = method === 'POST';
  const sent = post || req.params.length === 0 ? to : destinationOf(withQuery(to.url, req.params));
  // Serialise once; both signatures cover exactly these bytes / this URL.
  const form = post ? encodeForm(req.params) : null;
  const t = Math.floor(sender.nowMs / 1000);
  const headers: Record<string, string> = {
    'User-Agent': sender.userAgent,
    Accept: 'text/xml, application/xml, text/plain, */*',
    [WebhookHeader.TwilioSignature]: twilioSignature(req.authToken, sent.signed, post ? req.params : []),
    [WebhookHeader.SwitchboardSignature]: switchboardSignature(req.authToken, t, form ?? sent.signed),
    [WebhookHeader.TwilioIdempotency]: token,
    [WebhookHeader.SwitchboardIdempotency]: token,
  };
  if (sent.authorization) headers.Authorization = sent.authorization;
  if (form !== null) headers['Content-Type'] = 'application/x-www-form-urlencoded; charset=utf-8';
  return { to: sent, method, headers, body: form === null ? null : Buffer.from(form, 'utf8') };
}
