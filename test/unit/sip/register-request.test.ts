/**
 * A REGISTER read from the text the checks validated: what the registrar reads of it, and the
 * head its answers copy (the top Via stamped with the source, a To-tag added).
 */
import { describe, expect, it } from 'vitest';
import type { Flow } from '../../../src/sip/flow.js';
import { RegisterRequest } from '../../../src/sip/register-request.js';
import { validateRaw } from '../../../src/sip/validate.js';

const flow: Flow = {
  protocol: 'UDP',
  address: '192.0.2.7',
  port: 5070,
  local: { address: '127.0.0.1', port: 5060 },
};

function read(...headers: string[]): RegisterRequest {
  const raw = ['REGISTER sip:example.test SIP/2.0', ...headers, 'Content-Length: 0', '', ''].join('\r\n');
  const v = validateRaw(raw, true);
  if (v.kind !== 'ok') throw new Error(`not valid: ${v.kind} ${v.reason}`);
  return new RegisterRequest(v.message, flow);
}

const BASE = [
  'Via: SIP/2.0/UDP 10.0.0.1:5062;branch=z9hG4bK77;rport',
  'From: "Alice" <sip:alice@example.test>;tag=a1',
  'To: <sip:alice@example.test>',
  'Call-ID: r1@10.0.0.1',
  'CSeq: 2 REGISTER',
];

describe('RegisterRequest', () => {
  it('reads the address of record, the dialog identifiers and the branch', () => {
    const rq = read(...BASE, 'Max-Forwards: 70', 'User-Agent: phone/1', 'User-Agent: build 2');
    expect(rq.toUri).toBe('sip:alice@example.test');
    expect(rq.callId).toBe('r1@10.0.0.1');
    expect(rq.seq).toBe(2);
    expect(rq.branch).toBe('z9hG4bK77');
    expect(rq.joined('user-agent')).toBe('phone/1,build 2');
    expect(rq.facts).toEqual({
      method: 'REGISTER',
      uri: 'sip:example.test',
      maxForwards: '70',
      require: undefined,
      contentType: undefined,
      content: '',
    });
  });

  it('reads every Contact entry with its expires, compact form and the wildcard included', () => {
    const rq = read(
      ...BASE,
      'Contact: <sip:alice@10.0.0.1:5062;transport=udp>;expires=60, "Desk" <sip:alice@h2>',
      'm: sip:alice@h3;expires=0',
    );
    expect(rq.contacts).toEqual([
      { uri: 'sip:alice@10.0.0.1:5062;transport=udp', expires: '60' },
      { uri: 'sip:alice@h2', expires: undefined },
      { uri: 'sip:alice@h3', expires: '0' },
    ]);
    expect(read(...BASE, 'Contact: *', 'Expires: 0').contacts).toBe('*');
    expect(read(...BASE).contacts).toBeUndefined();
  });

  it('reads the Digest credentials of each Authorization header', () => {
    const rq = read(
      ...BASE,
      'Authorization: Digest username="alice", realm="example.test", nonce="n1", uri="sip:example.test", response="abc"',
      'Authorization: Basic eA==',
    );
    expect(rq.credentials).toEqual([
      { username: 'alice', realm: 'example.test', nonce: 'n1', uri: 'sip:example.test', response: 'abc' },
      null,
    ]);
  });

  it('copies Via, From, To, Call-ID and CSeq into its answers, the top Via stamped and To tagged', () => {
    const rq = read(
      'Via: SIP/2.0/UDP 10.0.0.1:5062;branch=z9hG4bK77;rport;received=1.2.3.4, SIP/2.0/UDP p;branch=z9hG4bKp',
      'Via: SIP/2.0/TCP q;branch=z9hG4bKq;rport',
      ...BASE.slice(1),
    );
    const head = rq.answerHead();
    expect(head).toMatch(
      /^Via: SIP\/2\.0\/UDP 10\.0\.0\.1:5062;branch=z9hG4bK77;rport=5070;received=192\.0\.2\.7, SIP\/2\.0\/UDP p;branch=z9hG4bKp\r\nVia: SIP\/2\.0\/TCP q;branch=z9hG4bKq;rport\r\nFrom: "Alice" <sip:alice@example\.test>;tag=a1\r\nTo: <sip:alice@example\.test>;tag=[0-9a-f]+\r\nCall-ID: r1@10\.0\.0\.1\r\nCSeq: 2 REGISTER\r\n$/,
    );
    // Made once: a retransmitted answer and its first copy carry the same To-tag.
    expect(rq.answerHead()).toBe(head);
  });

  it('adds received without rport when the client did not ask, and keeps a To-tag it has', () => {
    const rq = read(
      'Via: SIP/2.0/UDP 10.0.0.1;branch=z9hG4bK1',
      'From: <sip:alice@example.test>;tag=a1',
      'To: <sip:alice@example.test;tag=uri-param>;tag=t9',
      'Call-ID: c',
      'CSeq: 1 REGISTER',
    );
    expect(rq.answerHead()).toBe(
      'Via: SIP/2.0/UDP 10.0.0.1;branch=z9hG4bK1;received=192.0.2.7\r\nFrom: <sip:alice@example.test>;tag=a1\r\n' +
        'To: <sip:alice@example.test;tag=uri-param>;tag=t9\r\nCall-ID: c\r\nCSeq: 1 REGISTER\r\n',
    );
    const untagged = read(
      'Via: SIP/2.0/UDP 10.0.0.1;branch=z9hG4bK1',
      'From: <sip:alice@example.test>;tag=a1',
      'To: <sip:alice@example.test;tag=uri-param>',
      'Call-ID: c',
      'CSeq: 1 REGISTER',
    );
    expect(untagged.answerHead()).toMatch(
      /\r\nTo: <sip:alice@example\.test;tag=uri-param>;tag=[0-9a-f]+\r\n/,
    );
    expect(untagged.branch).toBe('z9hG4bK1');
  });
});
