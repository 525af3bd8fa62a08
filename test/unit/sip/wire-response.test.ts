/**
 * The answer to a request the checks refuse, written from its text: Via, From, To (tagged),
 * Call-ID and CSeq copied as written, nothing when there is no Via to answer by.
 */
import { describe, expect, it } from 'vitest';
import { statelessResponse } from '../../../src/sip/wire-response.js';

describe('statelessResponse', () => {
  it('copies what the answer needs in the request order and tags To', () => {
    const raw = [
      'INVITE sip:bob@example.test SIP/2.0 extra',
      'v: SIP/2.0/UDP 10.0.0.1;branch=z9hG4bK1',
      'To: <sip:bob@example.test>',
      'From: <sip:alice@example.test>;tag=a',
      'Call-ID: c1',
      'CSeq: 1 INVITE',
      'Subject: not copied',
      '',
      '',
    ].join('\r\n');
    expect(statelessResponse(raw, 400, 'Malformed Request-Line')).toMatch(
      /^SIP\/2\.0 400 Malformed Request-Line\r\nVia: SIP\/2\.0\/UDP 10\.0\.0\.1;branch=z9hG4bK1\r\nTo: <sip:bob@example\.test>;tag=[0-9a-f]+\r\nFrom: <sip:alice@example\.test>;tag=a\r\nCall-ID: c1\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n$/,
    );
  });

  it('gives nothing without a Via or an end of headers', () => {
    expect(statelessResponse('OPTIONS sip:a SIP/2.0\r\nCall-ID: c\r\n\r\n', 400, 'Bad')).toBeNull();
    expect(statelessResponse('OPTIONS sip:a SIP/2.0\r\nVia: SIP/2.0/UDP h', 400, 'Bad')).toBeNull();
  });
});
