/**
 * RecentReplies: a retransmission of a request answered statelessly gets the same bytes, one still
 * being handled is dropped, another request (new branch, CSeq or Call-ID) is new, and answers are
 * forgotten after two generations.
 */
import { describe, expect, it } from 'vitest';
import type { Flow } from '../../../src/sip/flow.js';
import { RecentReplies } from '../../../src/sip/recent-replies.js';

const flow: Flow = {
  protocol: 'UDP',
  address: '127.0.0.2',
  port: 5070,
  local: { address: '127.0.0.1', port: 5060 },
};
/** The key of a REGISTER from `from` with that branch, CSeq and Call-ID. */
const keyOf = (branch: string, seq = 1, callId = 'c1', from: Flow = flow): string | null =>
  RecentReplies.keyFor(from, branch, callId, seq, 'REGISTER');

describe('RecentReplies', () => {
  it('drops a retransmission while the first copy is handled, then resends the answer', () => {
    const replies = new RecentReplies(() => 0);
    const key = keyOf('z9hG4bK1') as string;
    expect(replies.begin(key)).toEqual({ kind: 'new' });
    expect(replies.begin(key)).toEqual({ kind: 'pending' });
    replies.answered(key, 'SIP/2.0 200 OK\r\n\r\n');
    expect(replies.begin(key)).toEqual({ kind: 'answered', text: 'SIP/2.0 200 OK\r\n\r\n' });
  });

  it('tells requests apart by branch, CSeq, Call-ID and source', () => {
    const keys = [
      keyOf('z9hG4bK1'),
      keyOf('z9hG4bK2'),
      keyOf('z9hG4bK1', 2),
      keyOf('z9hG4bK1', 1, 'c2'),
      keyOf('z9hG4bK1', 1, 'c1', { ...flow, port: 5071 }),
    ];
    expect(new Set(keys).size).toBe(5);
    expect(keyOf('')).toBeNull();
  });

  it('forgets an answer after two generations (8 to 16 s)', () => {
    const now = { t: 0 };
    const replies = new RecentReplies(() => now.t);
    const key = keyOf('z9hG4bK1') as string;
    replies.begin(key);
    replies.answered(key, 'SIP/2.0 401 Unauthorized\r\n\r\n');
    now.t = 8_000;
    expect(replies.begin(key).kind).toBe('answered');
    now.t = 16_000;
    expect(replies.begin(key)).toEqual({ kind: 'new' });
  });

  it('returns the kept bytes of an answer, and keeps a long answer whole', () => {
    const replies = new RecentReplies(() => 0);
    const short = keyOf('z9hG4bK1') as string;
    const long = keyOf('z9hG4bK2') as string;
    const text = 'SIP/2.0 200 OK\r\nContact: <sip:a@h\xe9>\r\n\r\n';
    replies.begin(short);
    expect(replies.answered(short, text)?.equals(Buffer.from(text, 'latin1'))).toBe(true);
    const big = `SIP/2.0 200 OK\r\nX: ${'x'.repeat(20_000)}\r\n\r\n`;
    replies.begin(long);
    expect(replies.answered(long, big)).toBeNull();
    expect(replies.begin(short)).toEqual({ kind: 'answered', text });
    expect(replies.begin(long)).toEqual({ kind: 'answered', text: big });
  });

  it('keeps answers across a generation retired early for want of buffer room', () => {
    const replies = new RecentReplies(() => 0);
    const text = `SIP/2.0 401 Unauthorized\r\nX: ${'n'.repeat(15_000)}\r\n\r\n`;
    // Enough answers to fill two generations' buffers (a little over 30 MiB each) and more.
    const keys = Array.from({ length: 4_500 }, (_, i) => keyOf(`z9hG4bK${i}`) as string);
    for (const key of keys) {
      replies.begin(key);
      replies.answered(key, `${text}${key}`);
    }
    // The last ones are in the current or the previous generation, intact.
    for (const key of keys.slice(-500))
      expect(replies.begin(key)).toEqual({ kind: 'answered', text: `${text}${key}` });
    // The first ones went with the generation retired twice over.
    expect(replies.begin(keys[0] as string)).toEqual({ kind: 'new' });
  });
});
