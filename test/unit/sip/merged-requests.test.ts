/**
 * MergedRequests: a second copy of an out-of-dialog request (same Call-ID, From tag and CSeq, another
 * branch) gets 482 while the first is remembered; a retransmission (same branch) is not a merge;
 * Timer B and a released challenge forget the first.
 */
import { describe, expect, it } from 'vitest';
import { MergedRequests } from '../../../src/sip/merged-requests.js';
import type { SipRequest } from '../../../src/sip/message.js';
import type { SipStack } from '../../../src/sip/stack.js';
import { SipTimers } from '../../../src/sip/timers.js';
import { inviteRequest } from '../../support/sip-request.js';

const invite = (branch: string, callId = 'c1'): SipRequest =>
  inviteRequest({ branch, callId, seq: 7, fromTag: 'f1' });

function setup() {
  const answered: Array<{ branch: unknown; status: number }> = [];
  const stack = {
    respond: (rq: SipRequest, status: number) =>
      answered.push({ branch: rq.headers.via[0]?.params.branch, status }),
  } as unknown as SipStack;
  const clock = { now: 0 };
  return { answered, clock, merged: new MergedRequests(stack, () => clock.now) };
}

describe('MergedRequests', () => {
  it('answers 482 to a merged copy, admits a retransmission and other requests', () => {
    const { answered, merged } = setup();
    expect(merged.admit(invite('b1'))).toBe(true);
    expect(merged.admit(invite('b1'))).toBe(true);
    expect(merged.admit(invite('b2'))).toBe(false);
    expect(answered).toEqual([{ branch: 'b2', status: 482 }]);
    expect(merged.admit(invite('b3', 'c2'))).toBe(true);
  });

  it('forgets the first request after Timer B', () => {
    const { answered, clock, merged } = setup();
    merged.admit(invite('b1'));
    clock.now = SipTimers.TIMER_B - 1;
    expect(merged.admit(invite('b2'))).toBe(false);
    clock.now = SipTimers.TIMER_B;
    expect(merged.admit(invite('b2'))).toBe(true);
    expect(answered).toHaveLength(1);
  });

  it('forgets a released request at once', () => {
    const { merged } = setup();
    merged.admit(invite('b1'));
    merged.release(invite('b2'));
    expect(merged.admit(invite('b2'))).toBe(false);
    merged.release(invite('b1'));
    expect(merged.admit(invite('b2'))).toBe(true);
  });
});
