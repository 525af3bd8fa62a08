/**
 * Carrier-link benchmark: N messages through SmppCarrierLink to the local test SMSC, which answers
 * submit_sm at once and sends a receipt after BENCH_RECEIPT_MS (default 1000).
 *
 *   npx tsx ops/bench/sms-link.ts   (BENCH_N=5000 BENCH_WINDOW=50 BENCH_THROTTLE=0 BENCH_DROP_EVERY=off)
 *
 * R18/R19 (benchmarks-and-faults §4e): BENCH_N=100000 BENCH_THROTTLE=0.05 BENCH_DROP_EVERY=10000.
 *
 * Prints messages/s submitted, submit latency p50/p99, receipts matched, max outstanding (SMSC side,
 * answering after each socket read, and the link's own count).
 */
import { pino } from 'pino';
import { SmppCarrierLink } from '../../src/smpp/link.js';
import { parseSmppUrl } from '../../src/smpp/url.js';
import { TestSmsc } from '../lib/smsc.js';

const n = Number(process.env.BENCH_N ?? 5000);
const window = Number(process.env.BENCH_WINDOW ?? 50);
const smsc = new TestSmsc();
smsc.behaviour.receiptDelayMs = Number(process.env.BENCH_RECEIPT_MS ?? 1000);
// Answer after each read, so the SMSC's max outstanding counts the submit_sm in flight together.
smsc.behaviour.respAfterRead = true;
smsc.behaviour.throttleFraction = Number(process.env.BENCH_THROTTLE ?? 0);
smsc.behaviour.dropEverySubmits = process.env.BENCH_DROP_EVERY ? Number(process.env.BENCH_DROP_EVERY) : null;
const port = await smsc.listen();
const link = new SmppCarrierLink(
  [parseSmppUrl(`smpp://bench:pw@127.0.0.1:${port}?window=${window}&reconnect_min=0.05`)],
  {
    logger: pino({ level: 'warn' }),
  },
);
let receipts = 0;
let unmatched = 0;
let disconnects = 0;
link.subscribe((e) => {
  if (e.type === 'smpp.receipt') {
    if (e.matched) receipts++;
    else unmatched++;
  }
  if (e.type === 'smpp.linkState' && e.state === 'disconnected') disconnects++;
});
link.start();
while (!link.bound) await new Promise((r) => setTimeout(r, 10));

const latencies: number[] = [];
let duplicates = 0;
let failed = 0;
const t0 = performance.now();
await Promise.all(
  Array.from({ length: n }, async (_, i) => {
    const s = performance.now();
    try {
      const r = await link.submit({
        from: '15550001111',
        to: `1555${String(i).padStart(7, '0')}`,
        body: `bench ${i}`,
      });
      if (r.possibleDuplicate) duplicates++;
      latencies.push(performance.now() - s);
    } catch {
      failed++;
    }
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
    submitted: latencies.length,
    failed,
    lost: n - latencies.length - failed,
    flaggedDuplicates: duplicates,
    smscDrops: smsc.drops,
    linkDisconnects: disconnects,
    receiptsMatched: `${receipts}/${n}`,
    receiptsUnmatched: unmatched,
    smscMaxOutstanding: smsc.maxOutstanding,
    linkMaxOutstanding: Math.max(...link.stats().map((c) => c.maxOutstanding)),
    submitSmSeen: smsc.count('submit_sm'),
  })}\n`,
);
await link.close();
await smsc.close();
