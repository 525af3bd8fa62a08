import { describe, expect, it } from 'vitest';
import { StreamFramer } from '../../../src/sip/stream-framing.js';

function framer(limits = { maxHeaderBytes: 200, maxBodyBytes: 50 }) {
  const seen = { messages: [] as string[], pongs: 0, overflows: 0 };
  const f = new StreamFramer(limits, {
    message: (raw) => seen.messages.push(raw),
    pong: () => seen.pongs++,
    overflow: () => seen.overflows++,
  });
  return { f, seen };
}

const OPTIONS = 'OPTIONS sip:a@b SIP/2.0\r\nCall-ID: 1\r\nContent-Length: 0\r\n\r\n';
const MESSAGE = 'MESSAGE sip:a@b SIP/2.0\r\nCall-ID: 2\r\nl: 5\r\n\r\nhello';

describe('StreamFramer', () => {
  it('cuts messages by their Content-Length (compact form too), across and within chunks', () => {
    const { f, seen } = framer();
    const both = OPTIONS + MESSAGE;
    f.push(both.slice(0, 10));
    f.push(both.slice(10, OPTIONS.length + 20));
    expect(seen.messages).toEqual([OPTIONS]);
    f.push(`${both.slice(OPTIONS.length + 20)}${OPTIONS}`);
    expect(seen.messages).toEqual([OPTIONS, MESSAGE, OPTIONS]);
  });

  it('waits for the whole body', () => {
    const { f, seen } = framer();
    f.push(MESSAGE.slice(0, -2));
    expect(seen.messages).toEqual([]);
    f.push(MESSAGE.slice(-2));
    expect(seen.messages).toEqual([MESSAGE]);
  });

  it('answers a CRLFCRLF ping with a pong and skips CRLFs between messages', () => {
    const { f, seen } = framer();
    f.push(`\r\n\r\n\r\n${OPTIONS}\r\n\r\n`);
    expect(seen.pongs).toBe(2);
    expect(seen.messages).toEqual([OPTIONS]);
  });

  it('gives up on a header section or a body over its limit', () => {
    const head = framer();
    head.f.push(`OPTIONS sip:a@b SIP/2.0\r\nX: ${'y'.repeat(300)}`);
    expect(head.seen.overflows).toBe(1);
    const body = framer();
    body.f.push('MESSAGE sip:a@b SIP/2.0\r\nContent-Length: 51\r\n\r\n');
    expect(body.seen.overflows).toBe(1);
    expect(body.seen.messages).toEqual([]);
  });
});
