import { describe, expect, it } from 'vitest';
import { formatGenericValue, formatNameAddr, parseNameAddr } from '../../../src/sip/name-addr.js';
import { parseSipUri, SipUriError } from '../../../src/sip/sip-uri.js';

const reasonOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    if (e instanceof SipUriError) return e.reason;
    throw e;
  }
  throw new Error('did not throw');
};

describe('parseNameAddr / formatNameAddr (RFC 3261 §20.10)', () => {
  it.each([
    [
      '"Alice" <sip:a@b>;tag=x',
      { displayName: 'Alice', uri: { user: 'a', host: 'b' }, params: { tag: 'x' } },
    ],
    ['Alice  Smith <sip:a@b>', { displayName: 'Alice Smith', params: {} }],
    ['<sip:a@b>', { uri: { host: 'b' }, params: {} }],
    ['"" <sip:a@b>', { displayName: '' }],
    ['"Say \\"hi\\" \\\\ <x>" <sip:a@b>', { displayName: 'Say "hi" \\ <x>' }],
    ['"Alice"<sip:a@b>', { displayName: 'Alice' }],
    [
      '  <sip:a@b;lr>  ;  Expires = 60 ; tag=1 ',
      { uri: { params: { lr: null } }, params: { expires: '60', tag: '1' } },
    ],
    ['<sip:a@b?Subject=x>;tag=y', { uri: { headers: { Subject: 'x' } }, params: { tag: 'y' } }],
    ['sip:a@b;tag=x', { uri: { user: 'a', host: 'b', params: {} }, params: { tag: 'x' } }],
    ['sip:a@b', { uri: { host: 'b' }, params: {} }],
    [
      '<sip:a@b>;+sip.instance="<urn:uuid:f81d4fae>";reg-id=1',
      { params: { '+sip.instance': '<urn:uuid:f81d4fae>', 'reg-id': '1' } },
    ],
    ['<sip:a@b>;received=[2001:db8::1];lr', { params: { received: '[2001:db8::1]', lr: null } }],
  ])('parses %s', (text, expected) => {
    expect(parseNameAddr(text)).toMatchObject(expected);
  });

  it('has no displayName member when none was given', () => {
    expect('displayName' in parseNameAddr('<sip:a@b>')).toBe(false);
  });

  it.each([
    ['', 'missing scheme'],
    ['"Alice <sip:a@b>', 'unterminated quoted string'],
    ['"Alice" sip:a@b', 'expected "<" after the display name'],
    ['Alice@home <sip:a@b>', 'display name must be tokens or a quoted string'],
    ['<sip:a@b', 'missing ">"'],
    ['<sip:a@b>tag=x', 'expected ";" before a header parameter'],
    ['<sip:a@b>;', 'invalid header parameter name'],
    ['<sip:a@b>;tag=x;TAG=y', 'duplicate parameter "tag"'],
    ['<sip:a@b>;tag=', 'invalid value for "tag"'],
    ['<sip:a@b>;tag="x', 'unterminated quoted string'],
    ['sip:a@b?Subject=x', 'a URI with headers must be enclosed in "<>"'],
    ['<http://x>', 'unsupported scheme "http"'],
    ['"A\r\nB" <sip:a@b>', 'line break in quoted string'],
  ])('rejects %j: %s', (text, reason) => {
    expect(reasonOf(() => parseNameAddr(text))).toBe(reason);
  });

  it.each([
    ['"Alice" <sip:a@b>;tag=x', '"Alice" <sip:a@b>;tag=x'],
    ['Alice Smith <sip:a@b>', '"Alice Smith" <sip:a@b>'],
    ['sip:a@b;tag=x', '<sip:a@b>;tag=x'],
    ['"Say \\"hi\\"" <sip:a@[::1]:5060;lr>;expires=60', '"Say \\"hi\\"" <sip:a@[::1]:5060;lr>;expires=60'],
    ['<sip:a@b>;+sip.instance="<urn:uuid:1>";ob', '<sip:a@b>;+sip.instance="<urn:uuid:1>";ob'],
    ['<sip:a@b>;received=[::1]', '<sip:a@b>;received=[::1]'],
  ])('formats %s → %s', (text, formatted) => {
    expect(formatNameAddr(parseNameAddr(text))).toBe(formatted);
  });

  it('rejects control characters and bad parameter names when formatting', () => {
    const uri = parseSipUri('sip:a@b');
    expect(reasonOf(() => formatNameAddr({ displayName: 'a\nb', uri, params: {} }))).toBe(
      'control character in display name',
    );
    expect(reasonOf(() => formatNameAddr({ uri, params: { 'a b': null } }))).toBe(
      'invalid header parameter name',
    );
    expect(reasonOf(() => formatNameAddr({ uri, params: { tag: 'a\r\nVia: x' } }))).toBe(
      'control character in parameter value',
    );
  });

  it('formats generic values as token, host or quoted-string', () => {
    expect(formatGenericValue('ISDN')).toBe('ISDN');
    expect(formatGenericValue('[::1]')).toBe('[::1]');
    expect(formatGenericValue('a b')).toBe('"a b"');
    expect(formatGenericValue('')).toBe('""');
    expect(formatGenericValue('say "x"')).toBe('"say \\"x\\""');
  });
});
