import { describe, expect, it } from 'vitest';
import {
  formatSipAddress,
  formatSipUri,
  parseHostOrSipUri,
  parseSipUri,
  parseUriHeaders,
  type SipUri,
  SipUriError,
  uriScheme,
} from '../../../src/sip/sip-uri.js';

const reasonOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    if (e instanceof SipUriError) return e.reason;
    throw e;
  }
  throw new Error('did not throw');
};

describe('parseSipUri (RFC 3261 §19.1.1)', () => {
  it.each<[string, Partial<SipUri>]>([
    ['sip:alice@example.com', { scheme: 'sip', user: 'alice', host: 'example.com', params: {}, headers: {} }],
    ['SIPS:alice@example.com', { scheme: 'sips', user: 'alice', host: 'example.com' }],
    ['sip:example.com', { scheme: 'sip', host: 'example.com' }],
    ['sip:alice:secret@example.com:5061', { user: 'alice', password: 'secret', port: 5061 }],
    ['sip:alice:@h.com', { user: 'alice', password: '' }],
    ['sip:+15551234567@10.0.0.1:5060', { user: '+15551234567', host: '10.0.0.1', port: 5060 }],
    [
      'sip:+1555;npdi;rn=+1666@gw.example.com;user=phone',
      { user: '+1555;npdi;rn=+1666', params: { user: 'phone' } },
    ],
    ['sip:[::1]', { host: '::1' }],
    [
      'sip:bob@[2001:db8::7]:5070;transport=tcp',
      { host: '2001:db8::7', port: 5070, params: { transport: 'tcp' } },
    ],
    ['sip:[::ffff:192.0.2.1]:5060', { host: '::ffff:192.0.2.1', port: 5060 }],
    ['sip:[1:2:3:4:5:6:7:8]', { host: '1:2:3:4:5:6:7:8' }],
    ['sip:proxy.example.com;lr', { params: { lr: null } }],
    [
      'sip:p.example.com;Transport=TCP;LR;maddr=239.255.255.1',
      { params: { transport: 'TCP', lr: null, maddr: '239.255.255.1' } },
    ],
    ['sip:alice%40home@example.com', { user: 'alice@home' }],
    ['sip:%61lice@example.com', { user: 'alice' }],
    ['sip:j%C3%BCrgen@example.com', { user: 'jürgen' }],
    ['sip:a@h;x=a%3Bb', { params: { x: 'a;b' } }],
    ['sip:a@h?Subject=hi%20there&Priority=urgent', { headers: { Subject: 'hi there', Priority: 'urgent' } }],
    ['sip:a@h?X-Empty=', { headers: { 'X-Empty': '' } }],
    ['sip:a@h;lr?X-Foo=1', { params: { lr: null }, headers: { 'X-Foo': '1' } }],
    ['sip:a@example.com.', { host: 'example.com.' }],
    ['sip:a@EXAMPLE.com', { host: 'EXAMPLE.com' }],
  ])('%s', (text, expected) => {
    expect(parseSipUri(text)).toMatchObject(expected);
  });

  it('accepts `_` in host labels (container names), as peers send them', () => {
    expect(parseSipUri('sip:alice@my_host:5070').host).toBe('my_host');
    expect(parseSipUri('sip:alice@svc_1.local').host).toBe('svc_1.local');
  });

  it('keeps `__proto__` as a plain parameter name', () => {
    const uri = parseSipUri('sip:a@h;__proto__=x');
    expect(Object.keys(uri.params)).toEqual(['__proto__']);
    expect(uri.params.__proto__).toBe('x');
  });

  it.each<[string, Partial<SipUri>]>([
    ['tel:+1-201-555-0123', { scheme: 'tel', user: '+1-201-555-0123', host: '' }],
    ['tel:7042;phone-context=example.com', { user: '7042', params: { 'phone-context': 'example.com' } }],
    ['tel:+1555;ext=12;isub=1', { params: { ext: '12', isub: '1' } }],
  ])('tel (RFC 3966) %s', (text, expected) => {
    expect(parseSipUri(text)).toMatchObject(expected);
  });

  it.each([
    ['', 'missing scheme'],
    ['alice@example.com', 'missing scheme'],
    ['http://example.com', 'unsupported scheme "http"'],
    ['sip:', 'missing host'],
    ['sip:@example.com', 'empty user'],
    ['sip::pw@example.com', 'empty user'],
    ['sip:a@b@c', 'more than one "@" (escape as %40)'],
    ['sip:al ice@example.com', 'invalid character in user'],
    ['sip:a<b@example.com', 'invalid character in user'],
    ['sip:a:p@ss@h', 'more than one "@" (escape as %40)'],
    ['sip:a:p"w@h', 'invalid character in password'],
    ['sip:a%2@h', 'invalid character in user'],
    ['sip:a%zz@h', 'invalid character in user'],
    ['sip:a%FF@h', 'invalid escape in user (not UTF-8)'],
    ['sip:a@', 'missing host'],
    ['sip:a@-bad.com', 'invalid host'],
    ['sip:a@bad-.com', 'invalid host'],
    ['sip:a@example.123', 'invalid host'],
    ['sip:a@1.2.3.256', 'invalid host'],
    ['sip:a@1.2.3', 'invalid host'],
    ['sip:a@h:', 'invalid port'],
    ['sip:a@h:abc', 'invalid port'],
    ['sip:a@h:0', 'port must be 1 to 65535'],
    ['sip:a@h:65536', 'port must be 1 to 65535'],
    ['sip:a@h:123456', 'invalid port'],
    ['sip:a@h:5060:7', 'invalid port'],
    ['sip:a@[::1', 'unterminated IPv6 reference'],
    ['sip:a@[]', 'invalid IPv6 address'],
    ['sip:a@[1.2.3.4]', 'invalid IPv6 address'],
    ['sip:a@[::1]x', 'unexpected text after IPv6 reference'],
    ['sip:a@[1::2::3]', 'invalid IPv6 address'],
    ['sip:a@[1:2:3:4:5:6:7]', 'invalid IPv6 address'],
    ['sip:a@[12345::]', 'invalid IPv6 address'],
    ['sip:a@[fe80::1%25eth0]', 'invalid IPv6 address'],
    ['sip:a@::1', 'missing host'],
    ['sip:a@h;', 'empty parameter name'],
    ['sip:a@h;;lr', 'empty parameter name'],
    ['sip:a@h;=x', 'empty parameter name'],
    ['sip:a@h;x=', 'empty value for parameter "x"'],
    ['sip:a@h;lr;LR', 'duplicate parameter "lr"'],
    ['sip:a@h;x=a b', 'invalid character in parameter "x"'],
    ['sip:a@h?', 'empty headers part'],
    ['sip:a@h?X-Foo', 'header without "="'],
    ['sip:a@h?=1', 'empty header name'],
    ['sip:a@h?X=1&x=2', 'duplicate header "x"'],
    ['sip:a@h?X=a=b', 'invalid character in header "X"'],
    ['sip:a@h?X=a b', 'invalid character in header "X"'],
    [' sip:a@h', 'missing scheme'],
    ['sip:a@h ', 'invalid host'],
    ['tel:', 'missing telephone number'],
    ['tel:+', 'invalid telephone number'],
    ['tel:abc!', 'invalid telephone number'],
    ['tel:7042', 'a local tel number needs phone-context'],
    ['tel:+1555?X=1', 'tel URIs take no headers'],
    ['tel:+1555;a_b=1', 'invalid tel parameter name'],
    ['tel:+1555;ext=1;EXT=2', 'duplicate parameter "ext"'],
  ])('rejects %j: %s', (text, reason) => {
    expect(reasonOf(() => parseSipUri(text))).toBe(reason);
  });

  it('does not echo the input (it may hold a password) in the message', () => {
    expect(() => parseSipUri('sip:alice:s3cret@h:99999')).toThrow(
      /^invalid SIP URI: port must be 1 to 65535$/,
    );
  });
});

describe('formatSipUri', () => {
  it.each([
    'sip:alice@example.com',
    'sips:alice:secret@example.com:5061',
    'sip:example.com',
    'sip:+1555;npdi;rn=+1666@gw.example.com;user=phone',
    'sip:bob@[2001:db8::7]:5070;transport=tcp',
    'sip:proxy.example.com;lr',
    'sip:a@h;lr?X-Foo=1&Subject=hi%20there',
    'sip:alice%40home@example.com',
    'sip:a@h?X=a%3Db%26c',
    'tel:+1-201-555-0123;ext=12',
    'tel:7042;phone-context=example.com',
  ])('round-trips %s', (text) => {
    expect(formatSipUri(parseSipUri(text))).toBe(text);
  });

  it.each([
    ['SIP:%61lice@example.com;Transport=TCP', 'sip:alice@example.com;transport=TCP'],
    ['sip:a@h;x=a%3Bb', 'sip:a@h;x=a%3Bb'],
    ['sip:a@h?Subject=%41', 'sip:a@h?Subject=A'],
  ])('normalises %s → %s', (text, formatted) => {
    expect(formatSipUri(parseSipUri(text))).toBe(formatted);
  });

  it('escapes what each component does not allow, as UTF-8', () => {
    const uri: SipUri = {
      scheme: 'sip',
      user: 'a b@c',
      password: 'p:w',
      host: 'example.com',
      params: { x: 'a;b=c', flag: null },
      headers: { Subject: 'hi & bye=ok', 'X-Name': 'jürgen' },
    };
    const text = formatSipUri(uri);
    expect(text).toBe(
      'sip:a%20b%40c:p%3Aw@example.com;x=a%3Bb%3Dc;flag?Subject=hi%20%26%20bye%3Dok&X-Name=j%C3%BCrgen',
    );
    expect(parseSipUri(text)).toEqual(uri);
  });

  it('brackets IPv6 hosts', () => {
    expect(formatSipUri({ scheme: 'sip', host: '::1', port: 5060, params: {}, headers: {} })).toBe(
      'sip:[::1]:5060',
    );
  });

  it.each<[string, SipUri, string]>([
    ['empty host', { scheme: 'sip', host: '', params: {}, headers: {} }, 'missing host'],
    ['bad host', { scheme: 'sip', host: 'a b', params: {}, headers: {} }, 'invalid host'],
    ['bad IPv6', { scheme: 'sip', host: '1::2::3', params: {}, headers: {} }, 'invalid IPv6 address'],
    [
      'bad port',
      { scheme: 'sip', host: 'h', port: 70000, params: {}, headers: {} },
      'port must be 1 to 65535',
    ],
    [
      'fractional port',
      { scheme: 'sip', host: 'h', port: 1.5, params: {}, headers: {} },
      'port must be 1 to 65535',
    ],
    ['empty user', { scheme: 'sip', user: '', host: 'h', params: {}, headers: {} }, 'empty user'],
    [
      'password alone',
      { scheme: 'sip', password: 'x', host: 'h', params: {}, headers: {} },
      'password without user',
    ],
    [
      'empty param value',
      { scheme: 'sip', host: 'h', params: { x: '' }, headers: {} },
      'empty value for parameter "x"',
    ],
    [
      'empty param name',
      { scheme: 'sip', host: 'h', params: { '': null }, headers: {} },
      'empty parameter name',
    ],
    [
      'empty header name',
      { scheme: 'sip', host: 'h', params: {}, headers: { '': 'x' } },
      'empty header name',
    ],
    [
      'tel headers',
      { scheme: 'tel', user: '+1', host: '', params: {}, headers: { X: '1' } },
      'tel URIs take no headers',
    ],
    [
      'tel local',
      { scheme: 'tel', user: '7042', host: '', params: {}, headers: {} },
      'a local tel number needs phone-context',
    ],
  ])('rejects a model with %s', (_, uri, reason) => {
    expect(reasonOf(() => formatSipUri(uri))).toBe(reason);
  });
});

describe('parseUriHeaders', () => {
  it('decodes names and values and keeps order', () => {
    expect(parseUriHeaders('X-B=2&X-A=hello%20world')).toEqual({ 'X-B': '2', 'X-A': 'hello world' });
    expect(Object.keys(parseUriHeaders('X-B=2&X-A=1'))).toEqual(['X-B', 'X-A']);
  });
});

describe('uriScheme (RFC 3986 §3.1)', () => {
  it.each<[string, string | undefined]>([
    ['sip:a@b', 'sip'],
    ['SIPS:a@b', 'sips'],
    ['tel:+15550100', 'tel'],
    ['mailto:a@b', 'mailto'],
    ['urn+x.y-z:1', 'urn+x.y-z'],
    ['1sip:a@b', undefined],
    ['no scheme', undefined],
    ['', undefined],
  ])('%s → %s', (text, scheme) => {
    expect(uriScheme(text)).toBe(scheme);
  });
});

describe('parseHostOrSipUri', () => {
  it.each<[string, Partial<SipUri>]>([
    ['gw.example.com', { scheme: 'sip', host: 'gw.example.com' }],
    [
      'gw.example.com:5080;transport=tcp',
      { host: 'gw.example.com', port: 5080, params: { transport: 'tcp' } },
    ],
    ['[2001:db8::1]:5060', { host: '2001:db8::1', port: 5060 }],
    ['127.0.0.2', { host: '127.0.0.2' }],
    ['trunk@gw.example.com', { user: 'trunk', host: 'gw.example.com' }],
    ['sips:gw.example.com', { scheme: 'sips', host: 'gw.example.com' }],
    ['SIP:gw.example.com:5062', { scheme: 'sip', port: 5062 }],
  ])('%s', (text, expected) => {
    expect(parseHostOrSipUri(text)).toMatchObject(expected);
  });

  it.each([
    'not a host!',
    'tel:+15550100',
    '2001:db8::1',
    'gw.example.com:99999',
    '',
  ])('refuses %j', (text) => {
    expect(() => parseHostOrSipUri(text)).toThrow(SipUriError);
  });
});

describe('formatSipAddress', () => {
  it('escapes the user only where its grammar needs it and brackets IPv6 hosts', () => {
    expect(formatSipAddress('+15550100001', 'sip.example.com')).toBe('sip:+15550100001@sip.example.com');
    expect(formatSipAddress('a b:c@d', '203.0.113.7', { port: 5080 })).toBe(
      'sip:a%20b%3Ac%40d@203.0.113.7:5080',
    );
    expect(formatSipAddress('alice', '2001:db8::1', { port: 5060 })).toBe('sip:alice@[2001:db8::1]:5060');
    expect(formatSipAddress('alice', '[2001:db8::1]')).toBe('sip:alice@[2001:db8::1]');
    expect(formatSipAddress(undefined, 'gw.example.com', { port: 5080, params: { transport: 'tcp' } })).toBe(
      'sip:gw.example.com:5080;transport=tcp',
    );
  });

  it('refuses what no URI can hold', () => {
    expect(reasonOf(() => formatSipAddress('a', 'bad host'))).toBe('invalid host');
    expect(reasonOf(() => formatSipAddress('a', 'h.example.com', { port: 0 }))).toBe(
      'port must be 1 to 65535',
    );
    expect(reasonOf(() => formatSipAddress('', 'h.example.com'))).toBe('empty user');
  });
});
