/**
 * headerLines writes the headers a REGISTER answer adds exactly as the `sip` package's stringify
 * does, and refuses a structured header it does not write.
 */
import * as stack from 'sip';
import { describe, expect, it } from 'vitest';
import { challengeHeader } from '../../../src/sip/digest.js';
import type { SipResponse } from '../../../src/sip/message.js';
import { headerLines } from '../../../src/sip/response-text.js';

/** The package's lines for the same headers: its text of a response carrying only them. */
function packageLines(headers: Record<string, unknown>): string {
  const rs = { status: 200, reason: 'OK', version: '2.0', headers: structuredClone(headers) };
  const text = stack.stringify(rs as unknown as SipResponse);
  return text.slice(text.indexOf('\r\n') + 2, text.lastIndexOf('Content-Length: 0\r\n'));
}

describe('headerLines', () => {
  it.each<[string, Record<string, unknown>]>([
    ['a challenge', { 'www-authenticate': [challengeHeader('example.test', 'n1')] }],
    ['a stale proxy challenge', { 'proxy-authenticate': [challengeHeader('example.test', 'n2', true)] }],
    [
      'contacts and a date',
      {
        contact: [
          { uri: 'sip:alice@127.0.0.2:5070', params: { expires: '60' } },
          { uri: 'sip:alice@h2', params: { expires: '3600', q: null } },
        ],
        date: 'Thu, 26 Nov 2026 17:00:00 GMT',
      },
    ],
    ['Min-Expires', { 'min-expires': '60' }],
    ['Unsupported and a number', { unsupported: 'foo, bar', 'x-count': 3 }],
    ['the wildcard contact', { contact: '*' }],
  ])('writes %s as the package does', (_what, headers) => {
    const lines = headerLines(headers);
    expect(lines).toBe(packageLines(headers));
    expect(lines).not.toBe('');
  });

  it('writes nothing for no headers, and refuses a structured header it does not write', () => {
    expect(headerLines(undefined)).toBe('');
    expect(headerLines({ route: [{ uri: 'sip:r@example.test', params: {} }] })).toBeNull();
  });
});
