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

/** A request ready for the transport. */
export interface OutgoingRequest {
  /** The URL sent; `user:password@` in it travels as the Authorization header, never in the request line. */
  readonly url: URL;
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
 * Builds the request for one hop: `url` is the hop's URL before GET parameters are added. Each call signs
 * afresh, so a retry or a redirect carries a new timestamp and the same idempotency token.
 */
export function buildRequest(
  req: WebhookRequest,
  url: URL,
  method: HttpMethod,
  token: string,
  sender: Sender,
): OutgoingRequest {
  const sentUrl = method === 'GET' ? withQuery(url, req.params) : url;
  // Serialise once; both signatures cover exactly these bytes / this URL.
  const body = method === 'POST' ? Buffer.from(encodeForm(req.params), 'utf8') : null;
  const t = Math.floor(sender.nowMs / 1000);
  // Signed as the receiver reconstructs it (scheme, host, path, query): URL credentials are not part of it.
  const signedUrl = sentUrl.username || sentUrl.password ? withoutCredentials(sentUrl.href) : sentUrl.href;
  const headers: Record<string, string> = {
    'User-Agent': sender.userAgent,
    Accept: 'text/xml, application/xml, text/plain, */*',
    [WebhookHeader.TwilioSignature]: twilioSignature(
      req.authToken,
      signedUrl,
      method === 'POST' ? req.params : [],
    ),
    [WebhookHeader.SwitchboardSignature]: switchboardSignature(req.authToken, t, body ?? signedUrl),
    [WebhookHeader.TwilioIdempotency]: token,
    [WebhookHeader.SwitchboardIdempotency]: token,
  };
  const auth = basicAuth(sentUrl);
  if (auth) headers.Authorization = auth;
  if (body) headers['Content-Type'] = 'application/x-www-form-urlencoded; charset=utf-8';
  return { url: sentUrl, method, headers, body };
}
