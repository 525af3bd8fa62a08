/**
 * AcceptedInvites: an acknowledged INVITE's retransmissions are absorbed for the lifetime given,
 * another INVITE (new branch or Call-ID) is not, and entries expire in the order they came.
 */
import { describe, expect, it } from 'vitest';
import { AcceptedInvites } from '../../../src/sip/accepted-invites.js';
import type { SipRequest } from '../../../src/sip/message.js';
import { inviteRequest } from '../../support/sip-request.js';

const invite = (branch: string | undefined, callId = 'c1'): SipRequest =>
  inviteRequest({ branch, callId, seq: 1, fromTag: 't' });

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
