/**
 * Stateless digest nonces: an HMAC of issue time, realm and source address; no store involved.
 */
import { describe, expect, it } from 'vitest';
import { issueNonce, verifyNonce } from '../../../src/sip/digest.js';

const SECRET = 'a'.repeat(64);
const TTL = 300_000;

describe('stateless nonces', () => {
  const now = 1_700_000_000_000;
  const nonce = issueNonce(SECRET, 'example.test', '192.0.2.1', now);

  it('verifies within its life', () => {
    expect(verifyNonce(SECRET, nonce, 'example.test', '192.0.2.1', TTL, now + TTL)).toBe('valid');
  });

  it('is stale once expired (the client retries without asking its user)', () => {
    expect(verifyNonce(SECRET, nonce, 'example.test', '192.0.2.1', TTL, now + TTL + 1)).toBe('stale');
  });

  it.each([
    ['another source address', SECRET, 'example.test', '192.0.2.2'],
    ['another realm', SECRET, 'other.test', '192.0.2.1'],
    ['another secret', 'b'.repeat(64), 'example.test', '192.0.2.1'],
  ])('is invalid from %s', (_what, secret, realm, source) => {
    expect(verifyNonce(secret, nonce, realm, source, TTL, now)).toBe('invalid');
  });

  it('is invalid when forged or malformed', () => {
    const [time] = nonce.split('.');
    expect(verifyNonce(SECRET, `${time}.${'0'.repeat(32)}`, 'example.test', '192.0.2.1', TTL, now)).toBe(
      'invalid',
    );
    expect(verifyNonce(SECRET, 'not-a-nonce', 'example.test', '192.0.2.1', TTL, now)).toBe('invalid');
    // A later time with the old MAC does not pass either.
    const later = (now + 1).toString(16);
    expect(
      verifyNonce(SECRET, `${later}.${nonce.split('.')[1]}`, 'example.test', '192.0.2.1', TTL, now),
    ).toBe('invalid');
  });
});
