/**
 * responseText writes a response exactly as the `sip` package's stringify does: every header form
 * a response of ours carries, and the ones it hands back to the package.
 */
import * as stack from 'sip';
import { describe, expect, it } from 'vitest';
import { challengeHeader } from '../../../src/sip/digest.js';
import { cloneMessage, makeWireResponse, type SipRequest } from '../../../src/sip/message.js';
import { responseText } from '../../../src/sip/response-text.js';

const raw = [
  'REGISTER sip:127.0.0.1:5060 SIP/2.0',
  'Via: SIP/2.0/UDP 127.0.0.2:5070;branch=z9hG4bK-1-2-3;rport',
  'Via: SIP/2.0/TCP [::1]:5080;branch=z9hG4bKx;received=10.0.0.1',
  'From: "Alice A" <sip:alice@example.test>;tag=abc',
  'To: <sip:alice@example.test>',
  'Call-ID: 1-2@127.0.0.2',
  'CSeq: 7 REGISTER',
  'Record-Route: <sip:p1.example.test;lr>, <sip:p2.example.test;lr;transport=tcp>',
  'Contact: <sip:alice@127.0.0.2:5070;transport=udp>;expires=60, "x" <sip:alice@h2>',
  'User-Agent: test',
  'Content-Length: 0',
  '',
  '',
].join('\r\n');

const request = (): SipRequest => {
  const rq = stack.parse(raw) as SipRequest;
  rq.headers.via[0]!.params.received = '127.0.0.2';
  rq.headers.via[0]!.params.rport = '5070';
  return rq;
};

/** Both serializers get their own copy: each sets Content-Length on the message it writes. */
function same(status: number, options: Parameters<typeof makeWireResponse>[2]): string {
  const rs = makeWireResponse(request(), status, { toTag: 'fixed', ...options });
  const theirs = stack.stringify(cloneMessage(rs));
  expect(responseText(rs)).toBe(theirs);
  return theirs;
}

describe('responseText', () => {
  it('writes a challenge, a 200 with contacts and a date, and refusals as the package does', () => {
    expect(same(401, { headers: { 'www-authenticate': [challengeHeader('example.test', 'n1')] } })).toMatch(
      /^SIP\/2\.0 401 Unauthorized\r\nVia: SIP\/2\.0\/UDP 127\.0\.0\.2:5070;branch=z9hG4bK-1-2-3;rport=5070;received=127\.0\.0\.2\r\n/,
    );
    same(407, {
      headers: { 'proxy-authenticate': [challengeHeader('example.test', 'n2', true)] },
    });
    same(200, {
      headers: {
        contact: [
          { uri: 'sip:alice@127.0.0.2:5070', params: { expires: '60' } },
          { uri: 'sip:alice@h2', params: { expires: '3600', q: null } },
        ],
        date: 'Thu, 26 Nov 2026 17:00:00 GMT',
      },
    });
    same(200, { headers: { date: 'Thu, 26 Nov 2026 17:00:00 GMT' } });
    same(423, { headers: { 'min-expires': '60' } });
    same(403, { reason: 'Client Disabled' });
    same(200, { headers: { contact: [] } });
    same(200, { headers: { contact: '*', 'x-count': 3 } });
    same(200, { content: 'v=0\r\n', headers: { 'content-type': 'application/sdp' } });
    same(500, { headers: { route: [{ uri: 'sip:r@example.test', params: { lr: null } }], path: [] } });
  });

  it('hands a response with a credential header to the package', () => {
    same(200, {
      headers: {
        authorization: [{ scheme: 'Digest', username: '"a"', realm: '"r"' }],
        'authentication-info': { nextnonce: '"x"' },
      },
    });
  });
});
