/**
 * `beforeSend`: awaited (holding the window slot) just before a message's first submit_sm is
 * written, once per message; a rejection fails the message with ESME_RSYSERR and sends nothing.
 */
import { pino } from 'pino';
import { afterEach, expect, it } from 'vitest';
import { CommandStatus, isSmppError } from '../../../src/smpp/errors.js';
import { SmppCarrierLink } from '../../../src/smpp/link.js';
import { parseSmppUrl } from '../../../src/smpp/url.js';
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

it('runs once per message before its first write; a rejection fails it unsent', async () => {
  const smsc = new TestSmsc();
  const port = await smsc.listen();
  cleanups.push(() => smsc.close());
  const link = new SmppCarrierLink(
    [parseSmppUrl(`smpp://a:b@127.0.0.1:${port}?window=1&reconnect_min=0.05&reconnect_max=0.5`)],
    { logger },
  );
  cleanups.push(() => link.close());
  link.start();
  await waitFor(() => link.bound);

  let release!: () => void;
  let calls = 0;
  const long = 'x'.repeat(300); // two segments, one hook run
  const first = link.submit({
    from: '1',
    to: '100',
    body: long,
    beforeSend: () => {
      calls++;
      return new Promise<void>((r) => {
        release = r;
      });
    },
  });
  const second = link.submit({ from: '1', to: '101', body: 'behind the first' });
  await waitFor(() => calls === 1);
  await new Promise((r) => setTimeout(r, 100));
  // Nothing written while the hook runs, and the window slot stays taken (window=1).
  expect(smsc.submits()).toHaveLength(0);
  release();
  const r1 = await first;
  await second;
  expect(r1.messageIds).toHaveLength(2);
  expect(calls).toBe(1);
  expect(smsc.submits().map((p) => p.destination_addr)).toEqual(['100', '100', '101']);

  const refused = await link
    .submit({ from: '1', to: '102', body: 'y', beforeSend: () => Promise.reject(new Error('db down')) })
    .catch((e: unknown) => e);
  expect(isSmppError(refused) && refused.commandStatus).toBe(CommandStatus.ESME_RSYSERR);
  expect(smsc.submits().some((p) => p.destination_addr === '102')).toBe(false);
  await link.submit({ from: '1', to: '103', body: 'after the refusal' });
  expect(smsc.submits().at(-1)?.destination_addr).toBe('103');
});
