/**
 * RecentReplies: a retransmission of a request answered statelessly gets the same bytes, one still
 * being handled is dropped, another request (new branch, CSeq or Call-ID) is new, and answers are
 * forgotten after two generations.
 */
import { describe, expect, it } from 'vitest';
import type { SipRequest } from '../../../src/sip/message.js';
import { RecentReplies } from '../../../src/sip/recent-replies.js';
import type { Flow } from '../../../src/sip/transport.js';

const flow: Flow = {
  protocol: 'UDP',
  address: '127.0.0.2',
  port: 5070,
  local: { address: '127.0.0.1', port: 5060 },
};
const register = (branch: string, seq = 1, callId = 'c1'): SipRequest =>
  ({
    method: 'REGISTER',
    uri: 'sip:127.0.0.1',
    version: '2.0',
    headers: {
      via: [{ version: '2.0', protocol: 'UDP', host: '127.0.0.2', port: 5070, params: { branch } }],
      'call-id': callId,
      cseq: { seq, method: 'REGISTER' },
      to: { uri: 'sip:a@127.0.0.1', params: {} },
      from: { uri: 'sip:a@127.0.0.1', params: { tag: 't' } },
    },
  }) as SipRequest;

describe('RecentReplies', () => {
  it('drops a retransmission while the first copy is handled, then resends the answer', () => {
    const replies = new RecentReplies(() => 0);
    const key = RecentReplies.keyOf(register('z9hG4bK1'), flow) as string;
    expect(replies.begin(key)).toEqual({ kind: 'new' });
    expect(replies.begin(key)).toEqual({ kind: 'pending' });
    replies.answered(key, 'SIP/2.0 200 OK\r\n\r\n');
    expect(replies.begin(key)).toEqual({ kind: 'answered', text: 'SIP/2.0 200 OK\r\n\r\n' });
  });

  it('tells requests apart by branch, CSeq, Call-ID and source', () => {
    const keys = [
      RecentReplies.keyOf(register('z9hG4bK1'), flow),
      RecentReplies.keyOf(register('z9hG4bK2'), flow),
      RecentReplies.keyOf(register('z9hG4bK1', 2), flow),
      RecentReplies.keyOf(register('z9hG4bK1', 1, 'c2'), flow),
      RecentReplies.keyOf(register('z9hG4bK1'), { ...flow, port: 5071 }),
    ];
    expect(new Set(keys).size).toBe(5);
    expect(RecentReplies.keyOf(register(''), flow)).toBeNull();
  });

  it('forgets an answer after two generations (8 to 16 s)', () => {
    const now = { t: 0 };
    const replies = new RecentReplies(() => now.t);
    const key = RecentReplies.keyOf(register('z9hG4bK1'), flow) as string;
    replies.begin(key);
    replies.answered(key, 'SIP/2.0 401 Unauthorized\r\n\r\n');
    now.t = 8_000;
    expect(replies.begin(key).kind).toBe('answered');
    now.t = 16_000;
    expect(replies.begin(key)).toEqual({ kind: 'new' });
  });
});
