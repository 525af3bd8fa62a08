/**
 * The send window against the `smpp` package's server (the test SMSC): many submit_sm in flight on
 * one bind, never more than the window, the windows of several binds kept full from one queue, and a
 * batch of messages released together by one group-committed `beforeSend` leaving in one write.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { SmppCarrierLink } from '../../../src/smpp/link.js';
import { parseSmppUrls } from '../../../src/smpp/url.js';
import { TestSmsc } from '../../support/smsc.js';

const logger = pino({ level: 'silent' });
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function waitFor(pred: () => boolean, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error('waitFor timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function setup(binds: number, window: number): Promise<{ smsc: TestSmsc; link: SmppCarrierLink }> {
  const smsc = new TestSmsc();
  const port = await smsc.listen();
  cleanups.push(() => smsc.close());
  const url = `smpp://esme:pw@127.0.0.1:${port}?window=${window}`;
  const link = new SmppCarrierLink(parseSmppUrls(Array.from({ length: binds }, () => url).join(',')), {
    logger,
  });
  cleanups.push(() => link.close());
  link.start();
  await waitFor(() => link.stats().every((c) => c.state === 'bound'));
  return { smsc, link };
}

/** A stand-in for a group commit: every `beforeSend` asked for until it fires resolves together. */
function batchGate(delayMs: number): { before: () => Promise<void>; batches: number[] } {
  const batches: number[] = [];
  let waiting: Array<() => void> = [];
  return {
    batches,
    before: () =>
      new Promise<void>((resolve) => {
        if (waiting.length === 0)
          setTimeout(() => {
            const now = waiting;
            waiting = [];
            batches.push(now.length);
            for (const r of now) r();
          }, delayMs);
        waiting.push(resolve);
      }),
  };
}

describe('SMPP send window', () => {
  it('keeps the whole window of submit_sm in flight on one bind, never more', async () => {
    const { smsc, link } = await setup(1, 16);
    smsc.behaviour.respDelayMs = 100;
    const results = await Promise.all(
      Array.from({ length: 64 }, (_, i) => link.submit({ from: '1', to: String(i), body: `w${i}` })),
    );
    expect(new Set(results.map((r) => r.messageIds[0])).size).toBe(64);
    expect(smsc.maxOutstanding).toBe(16);
    expect(link.stats()[0]?.maxOutstanding).toBe(16);
  });

  it('fills the window of every bind from the one queue', async () => {
    const { smsc, link } = await setup(3, 8);
    smsc.behaviour.respDelayMs = 100;
    await Promise.all(
      Array.from({ length: 72 }, (_, i) => link.submit({ from: '1', to: String(i), body: 'x' })),
    );
    expect(link.stats().map((c) => c.maxOutstanding)).toEqual([8, 8, 8]);
    expect(smsc.maxOutstanding).toBe(8);
    expect(smsc.count('submit_sm')).toBe(72);
  });

  it('messages released by one group-committed beforeSend go out together, in flight at once', async () => {
    const { smsc, link } = await setup(1, 50);
    // The SMSC answers after each read: whatever arrived in one read is outstanding together.
    smsc.behaviour.respAfterRead = true;
    const gate = batchGate(20);
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        link.submit({ from: '1', to: String(i), body: `g${i}`, beforeSend: gate.before }),
      ),
    );
    expect(results).toHaveLength(40);
    expect(gate.batches).toEqual([40]);
    expect(smsc.count('submit_sm')).toBe(40);
    // One socket write: the SMSC reads all 40 at once (written PDU by PDU, they arrive over several reads).
    expect(smsc.maxOutstanding).toBe(40);
  });
});
