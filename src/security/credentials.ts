/**
 * Password hashing (scrypt; passwords are never stored in clear), auth tokens, and constant-time
 * secret comparison. Spec §Authentication 1.
 */
import {
  createHash,
  createSecretKey,
  type KeyObject,
  randomBytes,
  scrypt as scryptCb,
  timingSafeEqual,
} from 'node:crypto';
import { promisify } from 'node:util';

const scrypt = promisify(scryptCb) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

const PARAMS = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const KEYLEN = 32;

/** `scrypt$N$r$p$<salt b64>$<hash b64>` */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, KEYLEN, PARAMS);
  return `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  const salt = Buffer.from(parts[4] ?? '', 'base64');
  const expected = Buffer.from(parts[5] ?? '', 'base64');
  const actual = await scrypt(password, salt, expected.length, { N, r, p, maxmem: PARAMS.maxmem });
  return timingSafeEqual(actual, expected);
}

/** A fresh AuthToken: 32 lowercase hex characters. */
export function newAuthToken(): string {
  return randomBytes(16).toString('hex');
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Secrets whose HMAC key is kept (a node signs and checks for the few that are busy at a time). */
const HMAC_KEYS_MAX = 1024;
const hmacKeys = new Map<string, KeyObject>();

/**
 * A secret as an HMAC key object, kept: `createHmac` with a string key prepares the key afresh on
 * every call (measured: a third to half of a short message's HMAC). Bounded: cleared when full.
 */
export function hmacKey(secret: string): KeyObject {
  let key = hmacKeys.get(secret);
  if (!key) {
    if (hmacKeys.size >= HMAC_KEYS_MAX) hmacKeys.clear();
    key = createSecretKey(Buffer.from(secret, 'utf8'));
    hmacKeys.set(secret, key);
  }
  return key;
}
