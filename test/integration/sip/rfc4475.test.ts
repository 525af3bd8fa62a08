/**
 * RFC 4475 torture messages over UDP against the running service: each of the 49 gets the outcome
 * class of its catalogue entry (test/support/rfc4475.ts), the fixtures' SHA-256 are pinned, and the
 * service keeps answering afterwards with no leg or transaction left behind.
 */
import { createSocket, type Socket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTorture, TORTURE_CASES, type TortureOutcome } from '../../support/rfc4475.js';
import { startTestServer, type TestServer } from '../../support/server.js';

let ts: TestServer;
let socket: Socket;
let port: number;
const inbox: string[] = [];

beforeAll(async () => {
  ts = await startTestServer({ label: 'rfc4475' });
  port = ts.server.sip!.stack.port;
  socket = createSocket('udp4');
  socket.on('message', (m) => inbox.push(m.toString('latin1')));
  await new Promise<void>((r) => socket.bind(0, '127.0.0.2', () => r()));
});
afterAll(async () => {
  socket?.close();
  await ts?.dispose();
});

const statusOf = (m: string) => Number(/^SIP\/2\.0 (\d{3})/.exec(m)?.[1]);

/** Sends bytes and collects answers until a final one arrives or `quietMs` pass without one. */
async function exchange(bytes: Buffer, quietMs: number): Promise<number[]> {
  inbox.length = 0;
  // Answers to this message only: they copy its Via branch and its Call-ID. Most messages share one
  // branch (z9hG4bKkdjuw) and the server retransmits an unacknowledged final answer to an INVITE
  // (Timer G), so the branch alone would take an earlier message's 404 for this one's.
  const text = bytes.toString('latin1');
  const branch = /branch=([^;\s]+)/i.exec(text)?.[1];
  const callId = /^(?:call-id|i)[ \t]*:[ \t]*(\S+)/im.exec(text)?.[1];
  // Whole values only: badbranch's bare `z9hG4bK` is a prefix of every branch, and a stray answer
  // from another suite's peer that once had this socket's port must not count as its answer.
  const whole = (key: string) =>
    new RegExp(`${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?=[;,\\s]|$)`, 'm');
  const keys = [branch && `branch=${branch}`, callId].filter((k): k is string => !!k).map(whole);
  const mine = () => inbox.filter((m) => keys.length > 0 && keys.every((k) => k.test(m)));
  socket.send(bytes, port, '127.0.0.1');
  const end = Date.now() + quietMs;
  while (Date.now() < end) {
    if (mine().some((m) => statusOf(m) >= 200)) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  return mine().map(statusOf);
}

const EXPECTED: Record<Exclude<TortureOutcome, 'valid' | 'drop-response' | 'valid-response'>, number> = {
  'bad-request': 400,
  'bad-version': 505,
  'unsupported-scheme': 416,
  'bad-extension': 420,
  'unsupported-media': 415,
};
const PARSE_ERRORS = new Set(Object.values(EXPECTED));

describe('RFC 4475 torture messages (UDP)', () => {
  it('has all 49 messages with pinned hashes', () => {
    expect(TORTURE_CASES).toHaveLength(49);
    for (const c of TORTURE_CASES) expect(loadTorture(c.name).length).toBeGreaterThan(0);
  });

  it.each(TORTURE_CASES.map((c) => [c.name, c.outcome] as const))('%s → %s', async (name, outcome) => {
    const bytes = loadTorture(name);
    if (outcome === 'drop-response' || outcome === 'valid-response') {
      expect(await exchange(bytes, 250)).toEqual([]);
      return;
    }
    const statuses = await exchange(bytes, 2000);
    const final = statuses.find((s) => s >= 200);
    if (outcome === 'valid') {
      expect(final, `answers: ${statuses.join(',')}`).toBeDefined();
      expect(PARSE_ERRORS.has(final!)).toBe(false);
    } else {
      expect(final).toBe(EXPECTED[outcome]);
    }
  });

  it('still answers OPTIONS afterwards, and legs of the torture INVITEs are all ended', async () => {
    const options = Buffer.from(
      [
        `OPTIONS sip:ping@127.0.0.1:${port} SIP/2.0`,
        'Via: SIP/2.0/UDP 127.0.0.2:5999;branch=z9hG4bK-after-torture',
        'From: <sip:tester@127.0.0.2>;tag=1',
        'To: <sip:ping@127.0.0.1>',
        'Call-ID: after-torture@127.0.0.2',
        'CSeq: 1 OPTIONS',
        'Max-Forwards: 70',
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n'),
      'latin1',
    );
    expect(await exchange(options, 2000)).toContain(200);
    expect(inbox[0]).toMatch(/^Allow: .*INVITE.*REGISTER/m);
    const counters = ts.server.sip!.stack.counters;
    expect(counters.handlerErrors).toBe(0);
    expect(counters.rejected).toBeGreaterThan(0);
  });
});
