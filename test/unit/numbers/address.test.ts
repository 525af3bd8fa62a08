import { describe, expect, it } from 'vitest';
import {
  AddressError,
  type AddressKind,
  describeForms,
  e164CountryCode,
  formatNumber,
  isE164,
  isShortCode,
  isUssdCode,
  numberTypeOf,
  parseAddress,
  sipUserAndHost,
  toE164,
} from '../../../src/numbers/address.js';

const ALL: readonly AddressKind[] = ['e164', 'shortcode', 'digits', 'client', 'sip'];
const messageOf = (value: string, accept: readonly AddressKind[] = ALL, field = 'To'): string => {
  try {
    parseAddress(value, { field, accept });
  } catch (e) {
    expect(e).toBeInstanceOf(AddressError);
    return (e as Error).message;
  }
  throw new Error(`${JSON.stringify(value)} was accepted`);
};

describe('E.164', () => {
  it.each([
    ['+15550100001', '1'],
    ['+442079460000', '44'],
    ['+80012345678', '800'], // non-geographic (International Freephone)
    ['+8821234', '882'],
    ['+123456789012345', '1'], // 15 digits, the most E.164 allows
  ])('%s has country code %s', (value, cc) => {
    expect(e164CountryCode(value)).toBe(cc);
    expect(isE164(value)).toBe(true);
    expect(parseAddress(value, { field: 'To', accept: ['e164'] })).toEqual({
      kind: 'e164',
      text: value,
      countryCode: cc,
    });
  });

  it.each([
    ['+1234567890123456', '16 digits'],
    ['+999123456', 'no country has +999'],
    ['+2812345', 'no country has +28'],
    ['+0123', 'a country code never starts with 0'],
    ['+1 555 010 0001', 'spaces'],
    ['+1-555-010-0001', 'punctuation'],
    ['+', 'nothing after +'],
    ['+12', 'a country code and one digit'],
    ['+１５５５', 'non-ASCII digits'],
  ])('%s is not E.164 (%s)', (value) => {
    expect(isE164(value)).toBe(false);
    expect(messageOf(value)).toBe(
      `To '${value}' is not a valid E.164 number ('+', a country code, at most 15 digits, no spaces)`,
    );
  });

  it("a '+' decoded as a space says to URL-encode it", () => {
    expect(messageOf(' 15550100001', ['e164'], 'From')).toBe(
      "From ' 15550100001' is not a valid E.164 number; URL-encode '+' as %2B (curl --data-urlencode)",
    );
    expect(messageOf(' 1 555 010 0001')).toContain('%2B');
  });
});

describe('digits and short codes', () => {
  it('3 to 8 digits are a short code, other digit strings are digits', () => {
    expect(parseAddress('911', { field: 'To', accept: ALL }).kind).toBe('shortcode');
    expect(parseAddress('12345678', { field: 'To', accept: ALL }).kind).toBe('shortcode');
    expect(parseAddress('11', { field: 'To', accept: ALL }).kind).toBe('digits');
    expect(parseAddress('0044207946000', { field: 'To', accept: ALL }).kind).toBe('digits');
    expect(isShortCode('12345')).toBe(true);
    expect(isShortCode('123456789')).toBe(false);
  });

  it('a form the caller does not accept is named with the ones it does', () => {
    expect(messageOf('15550100001', ['e164', 'shortcode', 'client'])).toBe(
      "To '15550100001' must be an E.164 number (+15551234567), a short code (3 to 8 digits) or client:<name>",
    );
    expect(messageOf('alice', ['e164'], 'PhoneNumber')).toBe(
      "PhoneNumber 'alice' must be an E.164 number (+15551234567)",
    );
    expect(messageOf('', ['e164'])).toBe("To '' must be an E.164 number (+15551234567)");
  });
});

describe('client: and sip:', () => {
  it('parses a client with headers and a sip URI', () => {
    expect(parseAddress('client:alice?X-Foo=1', { field: 'To', accept: ALL })).toEqual({
      kind: 'client',
      text: 'client:alice?X-Foo=1',
      name: 'alice',
      headers: { 'X-Foo': '1' },
    });
    const sip = parseAddress('sip:bob@example.com:5070', { field: 'To', accept: ALL });
    expect(sip).toMatchObject({ kind: 'sip', uri: { user: 'bob', host: 'example.com', port: 5070 } });
  });

  it('refuses bad ones naming the field, and never repeats a sip URI (it may hold a password)', () => {
    expect(messageOf('client:')).toBe('To: client: needs a name, e.g. client:alice');
    expect(messageOf('sip:bob:secret@exa mple.com')).toBe('To: malformed sip: URI (invalid host)');
    const notAccepted = messageOf('sip:bob:secret@example.com', ['e164', 'client'], 'From');
    expect(notAccepted).toBe('From must be an E.164 number (+15551234567) or client:<name>');
    expect(notAccepted).not.toContain('secret');
    expect(messageOf('tel:+15550100001')).toBe('To: tel: URIs are not accepted');
  });

  it('quotes control characters as ? and never cuts a surrogate pair', () => {
    expect(messageOf('a\u0000b\nc', ['e164'])).toBe("To 'a?b?c' must be an E.164 number (+15551234567)");
    const emoji = '😀'.repeat(41);
    expect(messageOf(emoji, ['e164'])).toBe(
      `To '${'😀'.repeat(40)}…' must be an E.164 number (+15551234567)`,
    );
  });

  it('quotes at most 40 characters of a long value', () => {
    expect(messageOf('x'.repeat(500), ['e164'])).toBe(
      `To '${'x'.repeat(40)}…' must be an E.164 number (+15551234567)`,
    );
  });
});

describe('toE164 (numbers written without their +)', () => {
  it.each([
    ['15550100001', '+15550100001'],
    ['+1 (555) 010-0001', '+15550100001'],
    ['1555010', '+1555010'],
    ['12345', null], // a short code, not +12345
    ['99912345678', null],
    ['alice', null],
  ])('%s → %s', (value, expected) => {
    expect(toE164(value)).toBe(expected);
  });

  it('takes a larger minimum for bare digits where short codes are longer (SMPP)', () => {
    expect(toE164('1555010', 8)).toBeNull();
    expect(toE164('15550100', 8)).toBe('+15550100');
  });
});

describe('describeForms', () => {
  it('names digits once when both digit forms are accepted', () => {
    expect(describeForms(ALL)).toBe('an E.164 number (+15551234567), digits, client:<name> or a sip: URI');
  });
});

describe('sipUserAndHost', () => {
  it.each([
    ['sip:+15550100001@10.0.0.1:5060;user=phone', { user: '+15550100001', host: '10.0.0.1' }],
    ['"Bob" <sips:bob%40home@example.com>;tag=1', { user: 'bob@home', host: 'example.com' }],
    ['sip:alice@[2001:db8::1]:5080', { user: 'alice', host: '2001:db8::1' }],
    ['sip:example.com', { user: null, host: 'example.com' }],
    [
      '<sip:+15550100009@gw.example>;reason=unconditional, <sip:1000@pbx>',
      { user: '+15550100009', host: 'gw.example' },
    ],
  ])('%s', (text, expected) => {
    expect(sipUserAndHost(text)).toEqual(expected);
  });

  it.each(['tel:+15550100001', 'http://example.com', 'sip:bob@', 'not a uri'])('%s → null', (text) => {
    expect(sipUserAndHost(text)).toBeNull();
  });
});

describe('E.164 helpers', () => {
  it('validates, types and formats numbers', () => {
    expect(isE164('+15551234567')).toBe(true);
    expect(isE164('15551234567')).toBe(false);
    expect(isE164('+0123456789')).toBe(false);
    // Short national numbers exist (+1 needs no minimum here); an unassigned country code does not.
    expect(isE164('+1234567')).toBe(true);
    expect(isE164('+99912345678')).toBe(false);
    expect(isE164('+1234567890123456')).toBe(false);
    expect(numberTypeOf('+18005551234')).toBe('tollfree');
    expect(numberTypeOf('+15555551234')).toBe('local');
    expect(formatNumber('+15551234567')).toBe('(555) 123-4567');
    expect(formatNumber('+442079460000')).toBe('+442079460000');
  });
});

describe('USSD codes', () => {
  it('reads *777#, *777*3# and #123# as USSD codes, not numbers', () => {
    for (const code of ['*777#', '*777*3#', '#123#', '*#06#', '**21*5#']) {
      expect(isUssdCode(code)).toBe(true);
      expect(parseAddress(code, { field: 'PhoneNumber', accept: ['ussd'] })).toEqual({
        kind: 'ussd',
        text: code,
      });
    }
    for (const other of ['777#', '*777', '*7a7#', '+15551234567', `*${'1'.repeat(40)}#`])
      expect(isUssdCode(other)).toBe(false);
    expect(() => parseAddress('*777#', { field: 'To', accept: ['e164'] })).toThrow(AddressError);
  });
});
