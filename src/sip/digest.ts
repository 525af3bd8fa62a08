/**
 * HTTP Digest for SIP (RFC 3261 §22.4, RFC 2617 with qop=auth, MD5). Server side: challenges with
 * stateless nonces (an HMAC of the issue time, realm and source address under a secret all nodes
 * share, so any node can verify one and a challenge writes nothing), and verification against the
 * HA1 the clients table stores. Client side: the Authorization for a gateway's REGISTER or a
 * proxy's 401/407. The `sip` package's digest keeps nonces in process memory and misspells
 * `algorithm`, so this is ours.
 */
import { createHmac, hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { StackAuth, StackMessage } from 'sip';
import { hmacKey } from '../security/credentials.js';
import { detached } from './message.js';

// One-shot hashing (no Hash object per call): three of these per authenticated REGISTER.
export const md5 = (s: string): string => hash('md5', Buffer.from(s, 'latin1'), 'hex');
export const digestHa1 = (user: string, realm: string, password: string): string =>
  md5(`${user}:${realm}:${password}`);

/** What a nonce a client sends back is worth. */
export type NonceVerdict = 'valid' | 'stale' | 'invalid';

/** HMAC-SHA256 of the nonce's time, realm and source under `secret`: hex, the first 16 bytes. */
const nonceMac = (secret: string, issuedAt: string, realm: string, source: string): string =>
  createHmac('sha256', hmacKey(secret))
    .update(`${issuedAt}\n${realm.toLowerCase()}\n${source}`)
    .digest('hex')
    .slice(0, 32);

/**
 * A stateless nonce: `<issue time, ms, hex>.<HMAC-SHA256/128 of time, realm and source address>`.
 * Bound to the source address, so a captured Authorization replays only from the same address and
 * only within the nonce's life (docs/decisions.md).
 */
export function issueNonce(secret: string, realm: string, source: string, now = Date.now()): string {
  const issuedAt = now.toString(16);
  return `${issuedAt}.${nonceMac(secret, issuedAt, realm, source)}`;
}

/**
 * `valid` for a nonce we issued to `source` for `realm` within `ttlMs`; `stale` when it was ours but
 * has expired (the client retries with the new nonce without asking its user, RFC 2617 §3.2.1);
 * else `invalid`.
 */
export function verifyNonce(
  secret: string,
  nonce: string,
  realm: string,
  source: string,
  ttlMs: number,
  now = Date.now(),
): NonceVerdict {
  const m = /^([0-9a-f]{1,13})\.([0-9a-f]{32})$/.exec(nonce);
  if (!m) return 'invalid';
  const issuedAt = m[1] as string;
  // Both are 32 lowercase hex digits (the pattern above): comparing the text compares the MACs.
  const mac = Buffer.from(m[2] as string, 'latin1');
  if (!timingSafeEqual(mac, Buffer.from(nonceMac(secret, issuedAt, realm, source), 'latin1')))
    return 'invalid';
  const age = now - Number.parseInt(issuedAt, 16);
  // A nonce from the future (clock skew between nodes) is accepted within the same window.
  return Math.abs(age) <= ttlMs ? 'valid' : 'stale';
}

// Escapes are rare in these values: the pattern runs only where there is one.
const unquote = (v: string | undefined): string | undefined => {
  if (v === undefined || !(v.startsWith('"') && v.endsWith('"'))) return v;
  const inner = v.slice(1, -1);
  return inner.includes('\\') ? inner.replace(/\\(.)/g, '$1') : inner;
};
const quote = (v: string): string =>
  v.includes('"') || v.includes('\\') ? `"${v.replace(/(["\\])/g, '\\$1')}"` : `"${v}"`;

export interface DigestCredentials {
  readonly username: string;
  readonly realm: string;
  readonly nonce: string;
  readonly uri: string;
  readonly response: string;
  readonly qop?: string;
  readonly nc?: string;
  readonly cnonce?: string;
  readonly algorithm?: string;
}

/** The Digest credentials in an Authorization/Proxy-Authorization header (parsed by the stack). */
export function readCredentials(auth: StackAuth | undefined): DigestCredentials | null {
  if (!auth || auth.scheme?.toLowerCase() !== 'digest') return null;
  const username = unquote(auth.username);
  const realm = unquote(auth.realm);
  const nonce = unquote(auth.nonce);
  const uri = unquote(auth.uri);
  const response = unquote(auth.response);
  if (!username || realm === undefined || !nonce || !uri || !response) return null;
  // Optional members are set only when present (the credentials compare equal to a literal).
  const c: { -readonly [K in keyof DigestCredentials]: DigestCredentials[K] } = {
    username,
    realm,
    nonce,
    uri,
    response,
  };
  const qop = unquote(auth.qop);
  if (qop !== undefined) c.qop = qop;
  const nc = unquote(auth.nc);
  if (nc !== undefined) c.nc = nc;
  const cnonce = unquote(auth.cnonce);
  if (cnonce !== undefined) c.cnonce = cnonce;
  const algorithm = unquote(auth.algorithm);
  if (algorithm !== undefined) c.algorithm = algorithm;
  return c;
}

/** One auth-param of a credentials header: `name=token` or `name="quoted"` (RFC 2617 §3.2.2, §1.2). */
const AUTH_PARAM = /[ \t]*([^\s,"=]+)[ \t]*=[ \t]*([^\s,"]+|"(?:[^"\\]|\\.)*")[ \t]*(?:,|$)/y;

/**
 * The Digest credentials in an Authorization value as written (the registrar reads REGISTERs from
 * their text): the scheme, then auth-params read as the `sip` package reads them, names in any case.
 */
export function credentialsOf(value: string): DigestCredentials | null {
  const v = value.trimStart();
  const end = v.search(/[ \t]/);
  if (end <= 0) return null;
  // No prototype: a parameter named `__proto__` or `constructor` is just a parameter.
  const auth: StackAuth = Object.create(null);
  auth.scheme = v.slice(0, end);
  AUTH_PARAM.lastIndex = end;
  while (AUTH_PARAM.lastIndex < v.length) {
    const m = AUTH_PARAM.exec(v);
    if (!m) break;
    auth[(m[1] as string).toLowerCase()] = m[2];
  }
  return readCredentials(auth);
}

/** HA2 by `method:uri`: every client of a domain REGISTERs with the same Request-URI. Bounded. */
const ha2s = new Map<string, string>();
const MAX_HA2S = 1_024;

function ha2Of(method: string, uri: string): string {
  const a2 = `${method}:${uri}`;
  let ha2 = ha2s.get(a2);
  if (ha2 === undefined) {
    ha2 = md5(a2);
    if (ha2s.size >= MAX_HA2S) ha2s.clear();
    // A copy: the URI is a slice of the request's text, which the key must not keep alive.
    ha2s.set(detached(a2), ha2);
  }
  return ha2;
}

/** The response value a client with `ha1` must send for `method`. */
export function expectedResponse(
  ha1: string,
  method: string,
  c: Omit<DigestCredentials, 'response'>,
): string {
  const ha2 = ha2Of(method, c.uri);
  return c.qop
    ? md5(`${ha1}:${c.nonce}:${c.nc ?? ''}:${c.cnonce ?? ''}:${c.qop}:${ha2}`)
    : md5(`${ha1}:${c.nonce}:${ha2}`);
}

/** Constant-time check of the client's response. */
export function responseMatches(ha1: string, method: string, c: DigestCredentials): boolean {
  if (c.algorithm && c.algorithm.toUpperCase() !== 'MD5') return false;
  if (c.qop && c.qop !== 'auth') return false;
  const a = Buffer.from(expectedResponse(ha1, method, c));
  const b = Buffer.from(c.response.toLowerCase());
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A WWW-Authenticate (or Proxy-Authenticate) value for a fresh challenge. */
export function challengeHeader(realm: string, nonce: string, stale = false): StackAuth {
  return {
    scheme: 'Digest',
    realm: quote(realm),
    nonce: quote(nonce),
    algorithm: 'MD5',
    qop: '"auth"',
    ...(stale ? { stale: 'true' } : {}),
  };
}

/** A challenge received in a 401/407 (WWW-/Proxy-Authenticate), read as plain values. */
export interface Challenge {
  readonly realm: string;
  readonly nonce: string;
  readonly opaque?: string;
  readonly qop?: string;
  readonly algorithm?: string;
  readonly stale: boolean;
}

export function readChallenge(auth: StackAuth | undefined): Challenge | null {
  if (!auth || auth.scheme?.toLowerCase() !== 'digest') return null;
  const realm = unquote(auth.realm);
  const nonce = unquote(auth.nonce);
  if (realm === undefined || !nonce) return null;
  const opaque = unquote(auth.opaque);
  const qops = unquote(auth.qop)
    ?.split(',')
    .map((q) => q.trim());
  const algorithm = unquote(auth.algorithm);
  return {
    realm,
    nonce,
    ...(opaque !== undefined ? { opaque } : {}),
    ...(qops?.includes('auth') ? { qop: 'auth' } : {}),
    ...(algorithm !== undefined ? { algorithm } : {}),
    stale: unquote(auth.stale)?.toLowerCase() === 'true',
  };
}

/**
 * The Authorization value answering `challenge` for `method uri` (client side, RFC 2617 §3.2.2).
 * Null when the challenge asks for something we do not do (an algorithm other than MD5).
 */
export function authorize(
  challenge: Challenge,
  creds: { readonly username: string; readonly password: string },
  method: string,
  uri: string,
  nc = 1,
): StackAuth | null {
  if (challenge.algorithm && challenge.algorithm.toUpperCase() !== 'MD5') return null;
  const ha1 = digestHa1(creds.username, challenge.realm, creds.password);
  const cnonce = randomBytes(8).toString('hex');
  const ncText = nc.toString(16).padStart(8, '0');
  const base = { username: creds.username, realm: challenge.realm, nonce: challenge.nonce, uri };
  const response = challenge.qop
    ? expectedResponse(ha1, method, { ...base, qop: 'auth', nc: ncText, cnonce })
    : expectedResponse(ha1, method, base);
  return {
    scheme: 'Digest',
    username: quote(creds.username),
    realm: quote(challenge.realm),
    nonce: quote(challenge.nonce),
    uri: quote(uri),
    response: quote(response),
    algorithm: 'MD5',
    ...(challenge.qop ? { qop: 'auth', nc: ncText, cnonce: quote(cnonce) } : {}),
    ...(challenge.opaque !== undefined ? { opaque: quote(challenge.opaque) } : {}),
  };
}

/**
 * The request to send again after a 401/407 (RFC 3261 §22.2): a copy of `sent` with the next CSeq
 * and the answer to the response's challenge. Null when `rs` is no challenge or we cannot answer
 * it. The caller allows one retry per challenge so a wrong password cannot loop.
 */
export function retryWithCredentials<T extends StackMessage & { method: string; uri: string }>(
  sent: T,
  rs: StackMessage,
  creds: { readonly username: string; readonly password: string } | undefined,
): T | null {
  if (!creds || (rs.status !== 401 && rs.status !== 407)) return null;
  const challenge = readChallenge(
    (rs.status === 401 ? rs.headers['www-authenticate'] : rs.headers['proxy-authenticate'])?.[0],
  );
  const auth = challenge && authorize(challenge, creds, sent.method, sent.uri);
  if (!auth) return null;
  const retry = structuredClone(sent);
  retry.headers.via = [];
  retry.headers.cseq = { seq: sent.headers.cseq.seq + 1, method: sent.method };
  retry.headers[rs.status === 401 ? 'authorization' : 'proxy-authorization'] = [auth];
  return retry;
}
