/**
 * AcceptedInvites: an acknowledged INVITE's retransmissions are absorbed for the lifetime given,
 * another INVITE (new branch or Call-ID) is not, and entries expire in the order they came.
 */
import { describe, expect, it } from 'vitest';
import { AcceptedInvites } from '../../../src/sip/accepted-invites.js';
import type { SipRequest } from '../../../src/sip/message.js';

const invite = (branch: string | undefined, callId = 'c1'): SipRequest =>
  ({
    method: 'INVITE',
    uri: 'sip:+15550001111@127.0.0.1',
    version: '2.0',
    headers: {
      via: [{ version: '2.0', protocol: 'UDP', host: '127.0.0.2', port: 5070, params: { branch } }],
      'call-id': callId,
      cseq: { seq: 1, method: 'INVITE' },
      to: { uri: 'sip:+15550001111@127.0.0.1', params: {} },
      from: { uri: 'sip:a@127.0.0.2', params: { tag: 't' } },
    },
  }) as SipRequest;

describe('AcceptedInvites', () => {
  it('absorbs the same INVITE until its lifetime ends, and nothing else', () => {
    let now = 1_000;
    const accepted = new AcceptedInvites(32_000, () => now);
    expect(accepted.absorbs(invite('z9hG4bK1'))).toBe(false);
    expect(accepted.add(invite('z9hG4bK1'))).toBe(true);
    expect(accepted.absorbs(invite('z9hG4bK1'))).toBe(true);
    expect(accepted.absorbs(invite('z9hG4bK2'))).toBe(false);
    expect(accepted.absorbs(invite('z9hG4bK1', 'c2'))).toBe(false);
    now += 31_999;
    expect(accepted.absorbs(invite('z9hG4bK1'))).toBe(true);
    now += 1;
    expect(accepted.absorbs(invite('z9hG4bK1'))).toBe(false);
    expect(accepted.size).toBe(0);
  });

  it('drops the oldest entries first as time passes', () => {
    let now = 0;
    const accepted = new AcceptedInvites(10_000, () => now);
    accepted.add(invite('b1'));
    now = 4_000;
    accepted.add(invite('b2'));
    now = 10_000;
    accepted.add(invite('b3'));
    expect(accepted.size).toBe(2);
    expect(accepted.absorbs(invite('b1'))).toBe(false);
    expect(accepted.absorbs(invite('b2'))).toBe(true);
    now = 14_000;
    expect(accepted.absorbs(invite('b2'))).toBe(false);
    expect(accepted.absorbs(invite('b3'))).toBe(true);
    expect(accepted.size).toBe(1);
  });

  it('keeps no entry for an INVITE without a branch', () => {
    const accepted = new AcceptedInvites(32_000);
    expect(accepted.add(invite(undefined))).toBe(false);
    expect(accepted.size).toBe(0);
    expect(accepted.absorbs(invite(undefined))).toBe(false);
  });
});
