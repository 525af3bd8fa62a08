/**
 * bench:sms (benchmarks-and-faults B9) — API `POST /SMS/Messages.json` with a StatusCallback → SMPP
 * to a local SMSC sink (answers each socket read's submit_sm at once, sends a delivery receipt 1 s
 * later) → receipt → status callback to a local webhook server. The server runs in its own process
 * (the build, src/main.ts); the SMSC sink, the webhook server and the HTTP load generator (autocannon,
 * in a worker thread) run here. The peer, measured in the same run before and after: npm `smpp` alone
 * on loopback (ops/bench/sms-raw.ts), one bind at window 100.
 *
 *   npm run bench:sms [-- --duration 20 --connections 64 --window 50 --binds 1 --rate 0]
 *
 * Prints per stage: API accepted/s and latency (autocannon), submit_sm/s at the SMSC, delivered
 * status callbacks/s (first → last callback, so the fixed 1 s receipt delay is not counted), the
 * slowest of the three as the end-to-end rate, next to the raw rate and the ratio; lost/duplicated
 * messages at the SMSC and at the callback server; receipts matched (messages `delivered` in Postgres
 * / messages accepted); max submit_sm outstanding on one bind (SMSC side); server CPU per message.
 * Goal: ≥ 5,000 msg/s end to end with 100 % receipts matched.
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import autocannon from 'autocannon';
import { openDb, sql } from '../../src/store/postgres/db.js';
import { createNamespace } from '../lib/namespace.js';
import { TestSmsc } from '../lib/smsc.js';
import { rawSmppRate } from './sms-raw.js';
import { cpuSeconds, startServer } from './support.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const duration = arg('duration', 20);
const connections = arg('connections', 64);
const window = arg('window', 50);
const binds = arg('binds', 1);
// Offered requests per second (0: as fast as the server answers). A fixed rate compares the CPU per
// message of two builds at the same load when the machine is too busy for either to reach its best.
const rate = arg('rate', 0);
const RAW_N = 50_000;
const RAW_WINDOW = 100;
const WARM_UP = 1000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Seconds the server's main thread (its event loop) has run, and has waited runnable for a CPU, from
 * /proc/<pid>/schedstat: a large wait means the machine, not the server, set the pace.
 */
function schedSeconds(pid: number): { run: number; wait: number } {
  const [run, wait] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(/\s+/).map(Number);
  return { run: (run ?? 0) / 1e9, wait: (wait ?? 0) / 1e9 };
}

/** The status-callback receiver: every callback by message sid and status, with arrival times. */
function callbackServer() {
  const seen = new Map<string, number>();
  const delivered: number[] = [];
  let duplicates = 0;
  let total = 0;
  const body = (req: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let s = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => {
        s += c;
      });
      req.on('end', () => resolve(s));
    });
  const server = createServer((req, res) => {
    void body(req).then((text) => {
      const p = new URLSearchParams(text);
      const key = `${p.get('MessageSid')}|${p.get('MessageStatus')}`;
      total++;
      if (seen.has(key)) duplicates++;
      else {
        seen.set(key, Date.now());
        if (p.get('MessageStatus') === 'delivered') delivered.push(Date.now());
      }
      res.writeHead(204).end();
    });
  });
  return {
    server,
    delivered,
    get duplicates() {
      return duplicates;
    },
    get total() {
      return total;
    },
    reset() {
      seen.clear();
      delivered.length = 0;
      duplicates = 0;
      total = 0;
    },
  };
}

async function main() {
  const rawBefore = await rawSmppRate(RAW_N, RAW_WINDOW);
  const smsc = new TestSmsc();
  smsc.behaviour.accounts = { bench: 'pw' };
  smsc.behaviour.receiptDelayMs = 1000;
  smsc.behaviour.respAfterRead = true;
  smsc.behaviour.coalesceWrites = true;
  const smscPort = await smsc.listen();
  const callbacks = callbackServer();
  callbacks.server.keepAliveTimeout = 60_000;
  callbacks.server.listen(0, '127.0.0.1');
  await once(callbacks.server, 'listening');
  const cbUrl = `http://127.0.0.1:${(callbacks.server.address() as AddressInfo).port}/status`;
  const ns = await createNamespace('benchsms');
  const smppUrl = Array.from(
    { length: binds },
    () => `smpp://bench:pw@127.0.0.1:${smscPort}?window=${window}`,
  ).join(',');
  const { child, base, admin } = await startServer(ns, null, {
    NUMBER_POOL: '+14155550100-+14155550199',
    SMPP_URL: smppUrl,
  });
  const db = openDb(ns.databaseUrl, 2);
  const pid = child.pid ?? 0;
  try {
    const auth = `Basic ${Buffer.from(`${admin.sid}:${admin.auth_token}`).toString('base64')}`;
    const form = { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' };
    const bought = await fetch(`${base}/2012-04-24/Accounts/${admin.sid}/IncomingPhoneNumbers.json`, {
      method: 'POST',
      headers: form,
      body: 'PhoneNumber=%2B14155550100',
    });
    if (bought.status !== 201) throw new Error(`number: ${await bought.text()}`);
    while (smsc.binds < binds) await sleep(50);

    const url = `${base}/2012-04-24/Accounts/${admin.sid}/SMS/Messages.json`;
    const body = `From=%2B14155550100&To=%2B15551230000&Body=Benchmark+message&StatusCallback=${encodeURIComponent(cbUrl)}`;
    // Warm-up (JIT, connection pools), not counted: wait for its callbacks, then start counting afresh.
    await autocannon({ url, method: 'POST', headers: form, body, connections: 8, amount: WARM_UP });
    const warmUntil = Date.now() + 30_000;
    while (callbacks.delivered.length < WARM_UP && Date.now() < warmUntil) await sleep(100);
    let benchQueries = 0;
    const count = async (where: ReturnType<typeof sql>) => {
      benchQueries++;
      return Number(
        (await db.query(sql`SELECT count(*)::int AS n FROM sms_messages WHERE ${where}`))[0]?.n ?? 0,
      );
    };
    // Transactions committed in the server's database (its own writes and reads, and these counts).
    const commits = async () => {
      benchQueries++;
      const [row] = await db.query(
        sql`SELECT xact_commit::bigint AS n FROM pg_stat_database WHERE datname = current_database()`,
      );
      return Number(row?.n ?? 0);
    };
    const warm = await count(sql`true`);
    callbacks.reset();
    smsc.maxOutstanding = 0;
    const submits0 = smsc.submits().length;
    await sleep(1000); // backends report their commits when idle, at most once a second
    const xact0 = await commits();
    const queries0 = benchQueries;
    const benchCpu0 = process.cpuUsage();
    const cpu0 = cpuSeconds(pid);
    const sched0 = schedSeconds(pid);
    const t0 = Date.now();
    const r = await autocannon({
      url,
      method: 'POST',
      headers: form,
      body,
      connections,
      duration,
      workers: 1,
      ...(rate > 0 ? { overallRate: rate } : {}),
    });
    const tLoad = Date.now();
    // Every message the server accepted in the run (autocannon does not count answers in flight at its stop).
    let accepted = (await count(sql`true`)) - warm;
    const deadline = Date.now() + 60_000;
    while (callbacks.delivered.length < accepted && Date.now() < deadline) {
      await sleep(100);
      accepted = (await count(sql`true`)) - warm;
    }
    const cpu = cpuSeconds(pid) - cpu0;
    const benchCpuUs = process.cpuUsage(benchCpu0);
    const benchCpu = (benchCpuUs.user + benchCpuUs.system) / 1e6;
    const sched1 = schedSeconds(pid);
    const wall = (Date.now() - t0) / 1000;
    const submits = smsc.received.filter((x) => x.command === 'submit_sm').slice(submits0);
    const lastSubmit = submits.reduce((m, x) => Math.max(m, x.at), t0);
    const firstCb = callbacks.delivered[0] ?? t0;
    const lastCb = callbacks.delivered[callbacks.delivered.length - 1] ?? t0;
    const delivered = (await count(sql`status = 'delivered'`)) - warm;
    const pending = await count(sql`status IN ('queued', 'sending', 'sent')`);
    const failed = await count(sql`status IN ('failed', 'undelivered')`);
    await sleep(1500);
    const queries = benchQueries - queries0 + 1;
    const xact = (await commits()) - xact0 - queries;
    const rawAfter = await rawSmppRate(RAW_N, RAW_WINDOW);

    const apiRate = accepted / ((tLoad - t0) / 1000);
    const submitRate = submits.length / ((lastSubmit - t0) / 1000);
    const cbRate = callbacks.delivered.length / Math.max(0.001, (lastCb - firstCb) / 1000);
    const e2e = Math.min(apiRate, submitRate, cbRate);
    const raw = (rawBefore.perSecond + rawAfter.perSecond) / 2;
    const n0 = (x: number) => x.toFixed(0);
    console.log(
      `bench:sms — node ${process.version}, server pid ${pid}, ${connections} connections, ${duration} s, ` +
        `${binds} bind(s) at window ${window}${rate > 0 ? `, offered ${rate} msg/s` : ''}`,
    );
    console.log(
      `API: ${accepted} accepted (${r.non2xx} non-2xx, ${r.errors} errors), ${n0(apiRate)} msg/s, ` +
        `latency p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, max ${r.latency.max} ms`,
    );
    console.log(
      `SMPP: ${submits.length} submit_sm for ${accepted} messages (lost ${Math.max(0, accepted - submits.length)}, ` +
        `extra ${Math.max(0, submits.length - accepted)}), ${n0(submitRate)} submit_sm/s, ` +
        `max outstanding ${smsc.maxOutstanding} (window ${window})`,
    );
    console.log(
      `callbacks: ${callbacks.delivered.length} delivered for ${accepted} messages, ${n0(cbRate)}/s ` +
        `(${callbacks.total} callbacks in all, ${callbacks.duplicates} duplicated)`,
    );
    console.log(
      `receipts matched: ${delivered}/${accepted} delivered in Postgres (${((100 * delivered) / Math.max(1, accepted)).toFixed(2)} %), ` +
        `${pending} pending, ${failed} failed`,
    );
    console.log(
      `server CPU: ${((1000 * cpu) / Math.max(1, accepted)).toFixed(3)} ms per message (${cpu.toFixed(1)} s for the run and its receipts; ` +
        `${n0(accepted / Math.max(0.001, cpu))} msg/s per core-second, what the server would do with a core of its own)`,
    );
    console.log(
      `Postgres: ${xact} transactions for ${accepted} messages, ${(xact / Math.max(1, accepted)).toFixed(3)} per message ` +
        `(this bench's own ${queries} counting queries left out)`,
    );
    console.log(
      `bench process (load generator thread, SMSC sink, callback server): ${benchCpu.toFixed(1)} s CPU, ` +
        `${((1000 * benchCpu) / Math.max(1, accepted)).toFixed(3)} ms per message, ${((100 * benchCpu) / wall).toFixed(0)} % of a core`,
    );
    console.log(
      `server event loop over ${wall.toFixed(1)} s: ran ${(sched1.run - sched0.run).toFixed(1)} s, ` +
        `waited runnable for a CPU ${(sched1.wait - sched0.wait).toFixed(1)} s (machine load ${loadavg()[0]?.toFixed(1)})`,
    );
    console.log(
      `peer: npm smpp alone, 1 bind, window ${RAW_WINDOW}: ${n0(rawBefore.perSecond)} submit_sm/s before, ` +
        `${n0(rawAfter.perSecond)} after (max outstanding ${rawBefore.maxOutstanding})`,
    );
    console.log(
      `end to end: ${n0(e2e)} msg/s (slowest stage) = ${(e2e / raw).toFixed(2)} × the raw smpp rate (${n0(raw)}/s); goal ≥ 5,000 msg/s`,
    );
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
    await db.dispose();
    await smsc.close();
    callbacks.server.close();
    callbacks.server.closeAllConnections();
    await ns.dispose();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
