/**
 * Sids (spec §General conventions 5): two capital letters + 32 lowercase hex characters.
 */
import { randomFillSync } from 'node:crypto';

export const SidPrefix = {
  Account: 'AC',
  Organization: 'OR',
  Profile: 'PR',
  Call: 'CA',
  Sms: 'SM',
  Client: 'CL',
  Application: 'AP',
  PhoneNumber: 'PN',
  Gateway: 'GW',
  Notification: 'NO',
  Recording: 'RE',
  Extension: 'EX',
  Conference: 'CF',
  Instance: 'ID',
  Email: 'EM',
} as const;
export type SidPrefix = (typeof SidPrefix)[keyof typeof SidPrefix];

/** Random bytes drawn in blocks: one system call per 256 sids instead of one per sid. */
const POOL = Buffer.alloc(4096);
let poolOffset = POOL.length;

export function newSid(prefix: SidPrefix): string {
  return prefix + randomHex(16);
}

/**
 * `bytes` random bytes (at most 4,096) as lowercase hex, from the same pool as sids: SIP tags, branches
 * and Call-IDs are drawn several times per call, and a system call each costs more than the rest
 * of making them.
 */
export function randomHex(bytes: number): string {
  if (poolOffset + bytes > POOL.length) {
    randomFillSync(POOL);
    poolOffset = 0;
  }
  const hex = POOL.toString('hex', poolOffset, poolOffset + bytes);
  poolOffset += bytes;
  return hex;
}

const SID_RE = /^[A-Z]{2}[0-9a-f]{32}$/;

export function isSid(value: string, prefix?: SidPrefix): boolean {
  return SID_RE.test(value) && (prefix === undefined || value.startsWith(prefix));
}
