/**
 * The generic request checks: each failing check gives its status (483, 416, 420 with Unsupported,
 * 415 with Accept), in that order of precedence, and a request that passes them all gets null.
 */
import { describe, expect, it } from 'vitest';
import type { SipRequest } from '../../../src/sip/message.js';
import { rejectionOf } from '../../../src/sip/request-checks.js';

const request = (
  over: { method?: string; uri?: string; headers?: object; content?: string } = {},
): SipRequest =>
  ({
    method: over.method ?? 'INVITE',
    uri: over.uri ?? 'sip:bob@127.0.0.1',
    version: '2.0',
    headers: {
      via: [],
      'call-id': 'c1',
      cseq: { seq: 1, method: over.method ?? 'INVITE' },
      to: { uri: 'sip:bob@127.0.0.1', params: {} },
      from: { uri: 'sip:alice@127.0.0.1', params: { tag: 't' } },
      'max-forwards': 70,
      ...over.headers,
    },
    content: over.content ?? '',
  }) as SipRequest;

describe('rejectionOf', () => {
  it('lets a plain request through, with SDP or USSD bodies, multipart, or any body outside INVITE', () => {
    expect(rejectionOf(request())).toBeNull();
    expect(
      rejectionOf(request({ headers: { 'content-type': 'application/sdp' }, content: 'v=0' })),
    ).toBeNull();
    expect(
      rejectionOf(
        request({ headers: { 'content-type': 'Application/VND.3gpp.ussd+xml; charset=x' }, content: 'x' }),
      ),
    ).toBeNull();
    expect(
      rejectionOf(request({ headers: { 'content-type': 'multipart/mixed;boundary=b' }, content: 'x' })),
    ).toBeNull();
    expect(
      rejectionOf(request({ method: 'MESSAGE', headers: { 'content-type': 'text/plain' }, content: 'hi' })),
    ).toBeNull();
    expect(rejectionOf(request({ uri: 'tel:+15551234567' }))).toBeNull();
  });

  it('answers 483 when Max-Forwards is used up, before any other check', () => {
    expect(rejectionOf(request({ uri: 'http://x', headers: { 'max-forwards': 0 } }))).toEqual({
      status: 483,
    });
  });

  it('answers 416 to a Request-URI scheme we do not serve', () => {
    expect(rejectionOf(request({ uri: 'http://example.com/' }))).toEqual({ status: 416 });
  });

  it('answers 420 naming the option tags in Require, except to CANCEL', () => {
    expect(rejectionOf(request({ headers: { require: '100rel, foo' } }))).toEqual({
      status: 420,
      headers: { unsupported: '100rel, foo' },
    });
    expect(rejectionOf(request({ method: 'CANCEL', headers: { require: 'foo' } }))).toBeNull();
  });

  it('answers 415 with Accept to an INVITE body it cannot read', () => {
    expect(rejectionOf(request({ headers: { 'content-type': 'text/plain' }, content: 'hi' }))).toEqual({
      status: 415,
      headers: { accept: 'application/sdp' },
    });
  });
});
