/**
 * Carrier-link benchmark: N messages through SmppCarrierLink to the local test SMSC, which answers
 * submit_sm at once and sends a receipt after BENCH_RECEIPT_MS (default 1000).
 *
 *   npx tsx ops/bench/sms-link.ts            (BENCH_N=5000 BENCH_WINDOW=50 BENCH_THROTTLE=0)
 *
 * Prints messages/s submitted, submit latency p50/p99, receipts matched, max outstanding (SMSC side).
 */
import { pino } from 'pino';
import { SmppCarrierLink } from '../../src/smpp/link.js';
import { parseSmppUrl } from '../../src/smpp/url.js';
import { TestSmsc } from '../../test/support/smsc.js';

const n = Number(process.env.BENCH_N ?? 5000);
const window = Number(process.env.BENCH_WINDOW ?? 50);
const smsc = new TestSmsc();
smsc.behaviour.receiptDelayMs = Number(process.env.BENCH_RECEIPT_MS ?? 1000);
smsc.behaviour.throttleFraction = Number(process.env.BENCH_THROTTLE ?? 0);
const port = await smsc.listen();
const link = new SmppCarrierLink([parseSmppUrl(`smpp://bench:pw@127.0.0.1:${port}?window=${window}`)], {
  logger: pino({ level: 'warn' }),
});
let receipts = 0;
link.subscribe((e) => {
  if (e.type === 'smpp.receipt' && e.matched) receipts++;
});
link.start();
while (!link.bound) await new Promise((r) => setTimeout(r, 10));

const latencies: number[] = [];
const t0 = performance.now();
await Promise.all(
  Array.from({ length: n }, async (_, i) => {
    const s = performance.now();
    await link.submit({ from: '15550001111', to: `1555${String(i).padStart(7, '0')}`, body: `bench ${i}` });
    latencies.push(performance.now() - s);
  }),
);
const elapsed = (performance.now() - t0) / 1000;
const deadline = Date.now() + 10_000 + (smsc.behaviour.receiptDelayMs ?? 0);
while (receipts < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
latencies.sort((a, b) => a - b);
const pct = (p: number): string =>
  (latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0).toFixed(1);
process.stdout.write(
  `${JSON.stringify({
    messages: n,
    window,
    seconds: Number(elapsed.toFixed(2)),
    messagesPerSecond: Math.round(n / elapsed),
    submitLatencyMsP50: Number(pct(0.5)),
    submitLatencyMsP99: Number(pct(0.99)),
    receiptsMatched: `${receipts}/${n}`,
    smscMaxOutstanding: smsc.maxOutstanding,
    submitSmSeen: smsc.count('submit_sm'),
  })}\n`,
);
await link.close();
await smsc.close();
