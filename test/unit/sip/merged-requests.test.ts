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

const invite = (branch: string, callId = 'c1'): SipRequest =>
  ({
    method: 'INVITE',
    uri: 'sip:+15550001111@127.0.0.1',
    version: '2.0',
    headers: {
      via: [{ version: '2.0', protocol: 'UDP', host: '127.0.0.2', port: 5070, params: { branch } }],
      'call-id': callId,
      cseq: { seq: 7, method: 'INVITE' },
      to: { uri: 'sip:+15550001111@127.0.0.1', params: {} },
      from: { uri: 'sip:a@127.0.0.2', params: { tag: 'f1' } },
    },
  }) as SipRequest;

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
