/**
 * Webhook request signing.
 *
 * - `X-Twilio-Signature`: base64(HMAC-SHA1(authToken, url + for each parameter sorted by name: name + value)),
 *   exactly as Twilio documents it (https://www.twilio.com/docs/usage/webhooks/webhooks-security), so
 *   existing validators (twilio-node `validateRequest`, twilio-python `RequestValidator`) accept our requests.
 *   For GET the parameters travel in the query string and the signature covers the full URL with no
 *   extra parameters.
 * - `X-Switchboard-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(authToken, t + "." + exact bytes)>` over
 *   the exact body bytes sent (POST) or the exact URL sent (GET), timestamped against replay.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { hmacKey } from '../security/credentials.js';

/** An ordered list of form parameters; a name may repeat. */
export type Params = ReadonlyArray<readonly [string, string]>;

/** Parameters as most web frameworks hand them to a validator: a value or a list for repeated names. */
export type ParamRecord = Readonly<Record<string, string | readonly string[]>>;

/** Header names, lower-case as node:http reports them. */
export const SignatureHeader = {
  Twilio: 'x-twilio-signature',
  Switchboard: 'x-switchboard-signature',
} as const;

function toList(params: Params | ParamRecord): Params {
  if (Array.isArray(params)) return params as Params;
  const out: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(params as ParamRecord)) {
    if (typeof value === 'string') out.push([name, value]);
    else for (const v of value) out.push([name, v]);
  }
  return out;
}

/**
 * The string Twilio signs: the URL followed by each parameter's name and value, parameters sorted by
 * name (UTF-16 code unit order, as twilio-node does). For a repeated name the distinct values are sorted
 * and concatenated, matching twilio-node's validator, which de-duplicates identical repeated values.
 */
export function twilioSigningString(url: string, params: Params | ParamRecord): string {
  // Sorted by name, then value: a value repeated under one name is then next to itself.
  const sorted = [...toList(params)].sort(byNameThenValue);
  let data = url;
  for (let i = 0; i < sorted.length; i++) {
    const [name, value] = sorted[i] as readonly [string, string];
    const before = sorted[i - 1];
    if (before && before[0] === name && before[1] === value) continue;
    data += name + value;
  }
  return data;
}

/** UTF-16 code unit order (as `Array.prototype.sort` orders strings) of names, then of values. */
const byNameThenValue = (a: readonly [string, string], b: readonly [string, string]): number =>
  a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0;

/** `X-Twilio-Signature` for a request to `url` carrying `params` in a form body (empty for GET). */
export function twilioSignature(authToken: string, url: string, params: Params | ParamRecord): string {
  return createHmac('sha1', hmacKey(authToken))
    .update(twilioSigningString(url, params), 'utf8')
    .digest('base64');
}

/**
 * Twilio's JSON-body variant: the body's SHA-256 (hex) travels in a `bodySHA256` query parameter and the
 * signature covers that URL with no parameters. Returns the URL to send and its `X-Twilio-Signature`.
 */
export function twilioBodySignature(
  authToken: string,
  url: string,
  body: string | Uint8Array,
): { url: string; signature: string } {
  const hash = createHash('sha256').update(body).digest('hex');
  const signedUrl = `${url}${url.includes('?') ? '&' : '?'}bodySHA256=${hash}`;
  return { url: signedUrl, signature: twilioSignature(authToken, signedUrl, []) };
}

/** Inbound check of the JSON-body variant: the URL's `bodySHA256` must match the raw body and the signature the URL. */
export function verifyTwilioBodySignature(
  url: string,
  body: string | Uint8Array,
  authToken: string,
  signature: string | undefined | null,
): boolean {
  let claimed: string | null;
  try {
    claimed = new URL(url).searchParams.get('bodySHA256');
  } catch {
    return false;
  }
  if (!claimed || !safeEqual(createHash('sha256').update(body).digest('hex'), claimed)) return false;
  return verifyTwilioSignature(url, [], authToken, signature);
}

/** Constant-time string comparison; different lengths compare unequal without leaking where. */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  if (ab.length !== bb.length) {
    // Still spend the comparison time so the length is the only thing a caller can learn.
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}

/**
 * Inbound verification of an `X-Twilio-Signature`. `url` must be the externally visible URL the sender
 * signed (scheme and host as seen in front of any TLS-terminating proxy). A missing or empty signature
 * is rejected.
 */
export function verifyTwilioSignature(
  url: string,
  params: Params | ParamRecord,
  authToken: string,
  signature: string | undefined | null,
): boolean {
  if (!signature) return false;
  return safeEqual(twilioSignature(authToken, url, params), signature);
}

/** `X-Switchboard-Signature` value over the exact bytes sent at unix time `t` (seconds). */
export function switchboardSignature(authToken: string, t: number, bytes: Uint8Array | string): string {
  const mac = createHmac('sha256', hmacKey(authToken));
  // A string is signed as its UTF-8 bytes after the prefix, in one update with no Buffer made.
  if (typeof bytes === 'string') mac.update(`${t}.${bytes}`, 'utf8');
  else mac.update(`${t}.`, 'utf8').update(bytes);
  return `t=${t},v1=${mac.digest('hex')}`;
}

/**
 * Verifies an `X-Switchboard-Signature` header over `bytes` (the raw body, or the full request URL for
 * GET) and rejects timestamps further than `toleranceSec` from `nowSec`.
 */
export function verifySwitchboardSignature(
  header: string | undefined | null,
  bytes: Uint8Array | string,
  authToken: string,
  options: { nowSec?: number; toleranceSec?: number } = {},
): boolean {
  if (!header) return false;
  const parts = new Map<string, string>();
  for (const part of header.split(',')) {
    const i = part.indexOf('=');
    if (i > 0) parts.set(part.slice(0, i).trim(), part.slice(i + 1).trim());
  }
  const tRaw = parts.get('t');
  const v1 = parts.get('v1');
  if (!tRaw || !v1 || !/^\d{1,12}$/.test(tRaw)) return false;
  const t = Number(tRaw);
  const now = options.nowSec ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - t) > (options.toleranceSec ?? 300)) return false;
  return safeEqual(switchboardSignature(authToken, t, bytes), `t=${t},v1=${v1}`);
}

/** What the form serialiser leaves as it is: ASCII alphanumerics and `*-._` (WHATWG URL §5.2). */
const FORM_PLAIN = /^[A-Za-z0-9*\-._]*$/;
/** What `encodeURIComponent` leaves as it is but the form serialiser encodes, and the space. */
const FORM_EXTRA = /[!'()~]|%20/g;
const formExtra = (c: string) => (c === '%20' ? '+' : `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** One name or value as `URLSearchParams` serialises it; null when it holds a lone surrogate. */
function formComponent(s: string): string | null {
  if (FORM_PLAIN.test(s)) return s;
  try {
    return encodeURIComponent(s).replace(FORM_EXTRA, formExtra);
  } catch {
    // URLSearchParams writes a lone surrogate as U+FFFD; encodeURIComponent refuses it.
    return null;
  }
}

/**
 * application/x-www-form-urlencoded serialisation of an ordered parameter list (spaces as `+`): the
 * bytes `URLSearchParams` gives, without building one (most names and values need no escaping).
 */
export function encodeForm(params: Params): string {
  let out = '';
  for (let i = 0; i < params.length; i++) {
    const [name, value] = params[i] as readonly [string, string];
    const n = formComponent(name);
    const v = formComponent(value);
    if (n === null || v === null) return encodeFormSlowly(params);
    out += i === 0 ? `${n}=${v}` : `&${n}=${v}`;
  }
  return out;
}

function encodeFormSlowly(params: Params): string {
  const usp = new URLSearchParams();
  for (const [name, value] of params) usp.append(name, value);
  return usp.toString();
}
