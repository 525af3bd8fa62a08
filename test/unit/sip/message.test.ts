import * as stack from 'sip';
import { describe, expect, it } from 'vitest';
import { detached, sipUriOf, stackUriOf, userOf, wireUri, xHeadersOf } from '../../../src/sip/message.js';
import { parseSipUri } from '../../../src/sip/sip-uri.js';

describe('userOf (read with src/sip/sip-uri.ts)', () => {
  it.each<[string, string | undefined]>([
    ['sip:alice@example.com', 'alice'],
    ['sips:bob%40home@example.com:5061;transport=tls', 'bob@home'],
    ['sip:+15550100001@[2001:db8::1]:5080', '+15550100001'],
    ['sip:example.com', undefined],
    ['sip:a@b@c', undefined],
    ['sip:%ZZ@h', undefined],
    ['not a uri', undefined],
  ])('%s → %s', (uri, user) => {
    expect(userOf(uri)).toBe(user);
  });
});

describe('the URI boundary with the sip package', () => {
  it("reads the package's Route objects as the text they came from, then as our model", () => {
    const m = stack.parse(
      [
        'OPTIONS sip:bob@example.com SIP/2.0',
        'Via: SIP/2.0/UDP 192.0.2.1;branch=z9hG4bK1',
        'Route: <sip:proxy.example.com:5070;lr;transport=tcp>',
        'From: <sip:alice@example.com>;tag=1',
        'To: <sip:bob@example.com>',
        'Call-ID: c1',
        'CSeq: 1 OPTIONS',
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n'),
    );
    const entry = m?.headers.route?.[0];
    expect(typeof entry?.uri).toBe('object');
    expect(wireUri(entry!.uri)).toBe('sip:proxy.example.com:5070;lr;transport=tcp');
    expect(sipUriOf(entry!.uri)).toMatchObject({
      host: 'proxy.example.com',
      port: 5070,
      params: { lr: null, transport: 'tcp' },
    });
  });

  it('gives undefined where there is no URI or sip-uri.ts refuses it', () => {
    expect(sipUriOf(undefined)).toBeUndefined();
    expect(sipUriOf('sip:a@b@c')).toBeUndefined();
    expect(sipUriOf('http://example.com/')).toBeUndefined();
  });

  it("hands the package's resolver the scheme, host, port and transport it reads", () => {
    const uri = parseSipUri('sips:gw@[2001:db8::1]:5061;transport=tls');
    expect(stackUriOf(uri)).toEqual({
      schema: 'sips',
      user: 'gw',
      host: '2001:db8::1',
      port: 5061,
      params: { transport: 'tls' },
      headers: {},
    });
    expect(stackUriOf(parseSipUri('sip:h.example.com'))).not.toHaveProperty('port');
  });
});

describe('xHeadersOf', () => {
  it('keeps X- headers only, named X-Foo-Bar', () => {
    const rs = stack.parse(
      'SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK1\r\nFrom: <sip:a@h>;tag=1\r\nTo: <sip:b@h>;tag=2\r\n' +
        'Call-ID: c\r\nCSeq: 1 INVITE\r\nx-agent-id: 7\r\nX-Queue: sales\r\nSubject: hi\r\n\r\n',
    );
    expect(rs).toBeDefined();
    expect(xHeadersOf(rs!)).toEqual({ 'X-Agent-Id': '7', 'X-Queue': 'sales' });
  });
});

describe('detached (a kept copy of a string cut from a message)', () => {
  it('is the same text, whatever it was cut from', () => {
    const raw = 'REGISTER sip:a@b SIP/2.0\r\nContact: <sip:user1@127.0.0.2:5060>;expires=60\r\n\r\n';
    const contact = raw.slice(raw.indexOf('<') + 1, raw.indexOf('>'));
    expect(detached(contact)).toBe('sip:user1@127.0.0.2:5060');
    expect(detached('')).toBe('');
    expect(detached(' x ')).toBe(' x ');
  });
});
