/**
 * Raw validation before parsing: control characters where RFC 3261 forbids them, NUL where a value
 * would reach a record, text bodies with control bytes, and the length limits of docs/sip.md.
 */
import { describe, expect, it } from 'vitest';
import { validateRaw } from '../../../src/sip/validate.js';
import { SipLimits } from '../../../src/sip/wire-rules.js';

function request(
  o: {
    method?: string;
    uri?: string;
    from?: string;
    to?: string;
    callId?: string;
    extra?: string[];
    body?: string;
    contentType?: string;
  } = {},
): string {
  const method = o.method ?? 'INVITE';
  const body = o.body ?? '';
  return [
    `${method} ${o.uri ?? 'sip:+15550001@127.0.0.1'} SIP/2.0`,
    'Via: SIP/2.0/UDP 127.0.0.2:5060;branch=z9hG4bKv1',
    `From: ${o.from ?? '"Alice" <sip:alice@example.test>'};tag=a1`,
    `To: ${o.to ?? '<sip:+15550001@127.0.0.1>'}`,
    `Call-ID: ${o.callId ?? 'c1@example.test'}`,
    `CSeq: 1 ${method}`,
    'Max-Forwards: 70',
    ...(o.extra ?? []),
    ...(body ? [`Content-Type: ${o.contentType ?? 'text/plain'}`] : []),
    `Content-Length: ${body.length}`,
    '',
    body,
  ].join('\r\n');
}

const status = (raw: string) => {
  const v = validateRaw(raw, true);
  return v.kind === 'reject' ? v.status : v.kind;
};

describe('control characters', () => {
  it('accepts a plain INVITE', () => {
    expect(status(request())).toBe('ok');
  });

  it.each([
    ['From user', { from: '<sip:al\u0000ice@example.test>' }],
    ['display name', { from: '"Al\u0000ice" <sip:alice@example.test>' }],
    ['display name as quoted-pair', { from: '"Al\\\u0000ice" <sip:alice@example.test>' }],
    ['Call-ID', { callId: 'c\u00001@example.test' }],
    ['Request-URI', { uri: 'sip:+1555\u00000001@127.0.0.1' }],
    ['escaped NUL in the From user', { from: '<sip:al%00ice@example.test>' }],
    ['escaped NUL in the Request-URI user', { uri: 'sip:+1555%000001@127.0.0.1' }],
    ['bare CR in a header', { extra: ['Subject: a\rb'] }],
    ['BEL in User-Agent', { extra: ['User-Agent: x\u0007y'] }],
  ])('INVITE with NUL/CTL in %s → 400', (_name, o) => {
    expect(status(request(o))).toBe(400);
  });

  it('MESSAGE with a NUL in its text body → 400', () => {
    expect(status(request({ method: 'MESSAGE', body: 'hi\u0000there' }))).toBe(400);
  });

  it('MESSAGE with a binary body type may carry any byte', () => {
    expect(
      status(request({ method: 'MESSAGE', body: 'a\u0000b', contentType: 'application/octet-stream' })),
    ).toBe('ok');
  });

  it('a quoted-pair control character is grammar: an unknown method passes (RFC 4475 intmeth)', () => {
    expect(
      status(
        request({ method: 'FOO', to: '"BEL:\\\u0007 NUL:\\\u0000" <sip:x@example.test>' }).replace(
          'CSeq: 1 FOO',
          'CSeq: 1 FOO',
        ),
      ),
    ).toBe('ok');
  });

  it('escaped NUL in a REGISTER user stays valid (RFC 4475 escnull)', () => {
    expect(
      status(request({ method: 'REGISTER', uri: 'sip:example.com', to: '<sip:null-%00-null@example.com>' })),
    ).toBe('ok');
  });

  it('a response with a NUL in a header is dropped', () => {
    const rs = [
      'SIP/2.0 200 OK',
      'Via: SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bKr1',
      'From: <sip:a@example.test>;tag=1',
      'To: <sip:b@example.test>;tag=2',
      'Call-ID: r\u00001',
      'CSeq: 1 INVITE',
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n');
    expect(status(rs)).toBe('drop');
  });
});

describe('length limits', () => {
  const long = (n: number) => 'x'.repeat(n);
  it.each([
    ['Call-ID', { callId: `${long(SipLimits.CALL_ID)}@h` }],
    ['display name', { from: `"${long(SipLimits.DISPLAY_NAME)}" <sip:a@example.test>` }],
    ['From user', { from: `<sip:${long(SipLimits.USER + 1)}@example.test>` }],
    ['User-Agent', { extra: [`User-Agent: ${long(SipLimits.USER_AGENT + 1)}`] }],
    ['any header', { extra: [`X-Big: ${long(SipLimits.HEADER_VALUE + 1)}`] }],
    ['Request-URI', { uri: `sip:a@${long(SipLimits.REQUEST_URI)}` }],
  ])('%s over the limit → 400', (_name, o) => {
    expect(status(request(o))).toBe(400);
  });

  it('values at the limit pass', () => {
    expect(
      status(
        request({
          callId: long(SipLimits.CALL_ID),
          from: `"${long(SipLimits.DISPLAY_NAME - 2)}" <sip:${long(SipLimits.USER)}@example.test>`,
        }),
      ),
    ).toBe('ok');
  });
});

describe('header lines', () => {
  const verdict = (raw: string) => {
    const v = validateRaw(raw, true);
    return v.kind === 'ok' ? 'ok' : `${v.kind} ${v.reason}`;
  };

  it('skips empty lines before the start line and joins folded lines to the header before them', () => {
    expect(verdict(`\r\n\r\n${request()}`)).toBe('ok');
    expect(verdict(request({ extra: ['Subject: a long', ' \tsubject'] }))).toBe('ok');
    // A folded From still has to be a name-addr after joining.
    expect(verdict(request({ from: '"Alice"\r\n <sip:alice@example.test>' }))).toBe('ok');
  });

  it('reads compact forms as their long names', () => {
    expect(verdict(request({ extra: ['i: c2@example.test'] }))).toBe('reject Duplicate call-id header');
    expect(verdict(request({ extra: ['m: <sip:a@b>;expires=x'] }))).toBe('reject Malformed Contact');
  });

  it('checks every Via line and every entry of a list', () => {
    expect(
      verdict(request({ extra: ['Via: SIP/2.0/UDP h;branch=z9hG4bKa, SIP/2.0/UDP h;branch=z9hG4bK'] })),
    ).toBe('reject Malformed Via branch');
    expect(verdict(request({ extra: ['Route: <sip:r1;lr>, bad'] }))).toBe('reject Malformed route');
  });

  it('names the first repeated single header in a fixed order, whatever the order of the lines', () => {
    expect(verdict(request({ extra: ['Max-Forwards: 70', 'To: <sip:x@y>'] }))).toBe(
      'reject Duplicate to header',
    );
  });

  it('takes names that are properties of plain objects as ordinary headers', () => {
    expect(verdict(request({ extra: ['constructor: x', '__proto__: y', 'toString: z'] }))).toBe('ok');
  });

  it('refuses a line that is no `token: value`', () => {
    expect(verdict(request({ extra: ['No colon here'] }))).toBe('reject Malformed header line');
    expect(verdict(request({ extra: ['Bad name: x'] }))).toBe('reject Malformed header line');
  });
});
