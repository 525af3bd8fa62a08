/**
 * Stateless digest nonces: an HMAC of issue time, realm and source address; no store involved.
 */
import { createHmac } from 'node:crypto';
import * as stack from 'sip';
import { describe, expect, it } from 'vitest';
import {
  authorize,
  challengeHeader,
  credentialsOf,
  digestHa1,
  issueNonce,
  readChallenge,
  readCredentials,
  responseMatches,
  verifyNonce,
} from '../../../src/sip/digest.js';
import type { SipRequest } from '../../../src/sip/message.js';

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

describe('the nonce MAC', () => {
  // The MAC is HMAC-SHA256 (RFC 2104) truncated to 16 bytes, whatever way it is computed.
  const reference = (secret: string, issuedAt: string, realm: string, source: string) =>
    createHmac('sha256', Buffer.from(secret, 'utf8'))
      .update(`${issuedAt}\n${realm.toLowerCase()}\n${source}`)
      .digest('hex')
      .slice(0, 32);

  it.each([
    ['a 64-character secret', SECRET, 'example.test'],
    ['a short secret', 'k', 'example.test'],
    ['a secret longer than the hash block', 's'.repeat(200), 'example.test'],
    ['a realm outside ASCII', SECRET, 'exämple.test'],
    ['a very long realm', SECRET, `${'r'.repeat(2000)}.test`],
  ])('is HMAC-SHA256 with %s', (_what, secret, realm) => {
    const now = 1_700_000_000_123;
    const nonce = issueNonce(secret, realm, '192.0.2.1', now);
    expect(nonce).toBe(`${now.toString(16)}.${reference(secret, now.toString(16), realm, '192.0.2.1')}`);
    expect(verifyNonce(secret, nonce, realm, '192.0.2.1', TTL, now)).toBe('valid');
  });
});

describe('credentials and challenges as the stack parses them (quoted strings)', () => {
  it('reads credentials, taking escapes out of quoted values', () => {
    const c = readCredentials({
      scheme: 'Digest',
      username: '"al\\"ice"',
      realm: '"example.test"',
      nonce: '"n1"',
      uri: '"sip:example.test"',
      response: '"0123"',
      qop: 'auth',
      nc: '00000001',
      cnonce: '"c\\\\1"',
    });
    expect(c).toEqual({
      username: 'al"ice',
      realm: 'example.test',
      nonce: 'n1',
      uri: 'sip:example.test',
      response: '0123',
      qop: 'auth',
      nc: '00000001',
      cnonce: 'c\\1',
    });
    expect(
      readCredentials({ scheme: 'Digest', username: '"a"', realm: '""', nonce: '"n"', uri: '"u"' }),
    ).toBeNull();
  });

  it('answers a challenge with quoted values escaped, and the server accepts the answer', () => {
    const challenge = readChallenge(challengeHeader('example.test', 'n"1'));
    expect(challenge).toEqual({
      realm: 'example.test',
      nonce: 'n"1',
      qop: 'auth',
      algorithm: 'MD5',
      stale: false,
    });
    const auth = authorize(challenge!, { username: 'b\\ob', password: 'pw' }, 'REGISTER', 'sip:example.test');
    expect(auth?.username).toBe('"b\\\\ob"');
    expect(auth?.nonce).toBe('"n\\"1"');
    const c = readCredentials(auth!);
    expect(c?.username).toBe('b\\ob');
    expect(responseMatches(digestHa1('b\\ob', 'example.test', 'pw'), 'REGISTER', c!)).toBe(true);
    expect(responseMatches(digestHa1('b\\ob', 'example.test', 'other'), 'REGISTER', c!)).toBe(false);
  });
});

describe('credentials read from the text of a REGISTER', () => {
  /** What the stack's parse and readCredentials make of the same header. */
  const parsed = (value: string) =>
    readCredentials(
      (
        stack.parse(
          `REGISTER sip:h SIP/2.0\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK1\r\nAuthorization: ${value}\r\n\r\n`,
        ) as SipRequest
      ).headers.authorization?.[0],
    );

  it.each([
    'Digest username="alice", realm="example.test", nonce="n1", uri="sip:example.test", response="0123456789abcdef0123456789abcdef", algorithm=MD5, cnonce="c1", qop=auth, nc=00000001',
    'Digest username="a\\"b", realm="r", nonce="n", uri="sip:r", response="x"',
    'Digest  username = "bob" ,realm="r",nonce="n",uri="sip:r",response="y",opaque=""',
    'Digest realm="r", nonce="n", uri="sip:r", response="z"',
    'Basic YWxpY2U6c2VjcmV0',
  ])('match what the stack reads: %s', (value) => {
    expect(credentialsOf(value)).toEqual(parsed(value));
  });

  it('take parameter names in any case, and nothing but Digest', () => {
    expect(credentialsOf('digest USERNAME="alice", Realm="r", nonce="n", uri="sip:r", response="x"')).toEqual(
      { username: 'alice', realm: 'r', nonce: 'n', uri: 'sip:r', response: 'x' },
    );
    expect(credentialsOf('Digest')).toBeNull();
    expect(credentialsOf('Digest __proto__="x", constructor="y"')).toBeNull();
  });
});
