/**
 * bench:calls — calls end to end under sipp load; server in its own process
 * (real Redis, Postgres and media engine), the markup server in this process.
 *   A. Inbound call, markup `<Pause length="2"/><Hangup/>`, at each offered rate of `--rates` in
 *      turn (default 150 and 300 calls/s, `--duration` s each, after a short warm-up): achieved
 *      calls/s (sipp's successful calls / its elapsed time less the last call's 2 s, not `-r`),
 *      sipp's failed calls, INVITE→200 p50/p95 (sipp's response time 1 = webhook overhead: the stub
 *      answers at once), and CPU ms per successful call of the server process and of its media
 *      engine (utime + stime from /proc over the run), and the server's system calls and sleeps per call
 *      (counts: steadier than CPU time when other work shares the cores), and the Postgres side per
 *      call over the same window (CPU of the bench database's backends, commits, rows inserted and
 *      updated, see postgresWindow). Target at 300 calls/s: 0 failures, p95 < 50 ms,
 *      server ≤ 1.5 ms per call.
 *   B. `<Dial>` to a sipp UAS, callers hold 30 s: 50 calls/s → 1,500 live dialogs; failures and
 *      post-dial delay (caller's INVITE → 200) p95. Target 0 failures, p95 < 200 ms.
 *   C. Held calls (`<Pause length="600"/>`): N concurrent calls, main-process RSS per live call after a
 *      full GC (through the server's V8 inspector on loopback), once every call is past its INVITE
 *      transaction's Timer L (32 s); also heap per call and the raw RSS peak during the ramp.
 *      Target 2,400 calls at < 40 kB per call.
 *   A first measures the idle server's CPU per second (no call for `--idle-seconds`) and gives
 *   its server figure per call also net of that over each rate's window (the per-call cost proper:
 *   the idle cost weighs more per call the lower the rate).
 * Usage: npm run bench:calls [-- --rates 150,300 --duration 30 --idle-seconds 5 --dial-rate 50 --dial-seconds 30 --held 2400 --only CAB]
 * BENCH_HEAP_SNAPSHOT=<dir> writes server heap snapshots before C and with the calls held (compare them
 * in Chrome DevTools to see where the per-call memory goes). BENCH_CPU_PROF=<dir> writes the server's
 * CPU profile there when it exits (summarise it with ops/bench/cpu-profile-summary.ts).
 * BENCH_SERVER_DIR=<checkout> runs another checkout's build (see support.ts) for before/after runs.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createNamespace } from '../lib/namespace.js';
import { freePort } from '../lib/ports.js';
import { spawned } from '../lib/tools.js';
import {
  benchApi,
  collectedMemory,
  cpuWindow,
  heapSnapshot,
  markupServer,
  PEER_IP,
  percentile,
  postgresWindow,
  rssBytes,
  SERVER_DIR,
  SERVER_IP,
  sipp,
  startServer,
} from './support.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
/** Offered rates of scenario A, run in turn on the same server. */
const RATES = (() => {
  const i = process.argv.indexOf('--rates');
  const list = i === -1 ? '150,300' : (process.argv[i + 1] ?? '');
  const rates = list.split(',').map(Number);
  if (!rates.length || rates.some((r) => !(r > 0)))
    throw new Error(`--rates: expected e.g. 150,300, got ${list}`);
  return rates;
})();
const DURATION = arg('duration', 30);
const DIAL_RATE = arg('dial-rate', 50);
const DIAL_SECONDS = arg('dial-seconds', 30);
const HELD = arg('held', 2400);
const ONLY = (() => {
  const i = process.argv.indexOf('--only');
  return i === -1 ? 'CAB' : (process.argv[i + 1] ?? 'CAB').toUpperCase();
})();
const UAS_IP = '127.0.0.3';
/** Seconds the idle server's CPU is measured for, before scenario A. */
const IDLE_SECONDS = arg('idle-seconds', 5);

const api = (port: number, path: string, form: Record<string, string> | null) =>
  benchApi(`http://${SERVER_IP}:${port}`, path, form);

async function main() {
  console.log(`bench:calls — node ${process.version}, server ${SERVER_DIR}`);
  const ns = await createNamespace('benchcalls');
  const sipPort = await freePort(SERVER_IP);
  const uasPort = await freePort(UAS_IP);
  const markup = await markupServer({
    '/pause': '<Pause length="2"/><Hangup/>',
    '/dial': `<Dial timeout="10"><Sip>sip:uas@${UAS_IP}:${uasPort}</Sip></Dial>`,
    '/hold': '<Pause length="600"/>',
  });
  const {
    child: server,
    httpPort,
    inspectPort,
  } = await startServer(
    ns,
    sipPort,
    { SIP_TCP: 'false', ACCOUNT_CPS: '10000', ACCOUNT_MAX_CONCURRENT_CALLS: '100000' },
    { inspect: true },
  );
  const pid = server.pid!;
  const uas = spawn(
    'sipp',
    ['-sn', 'uas', '-i', UAS_IP, '-p', String(uasPort), '-t', 'u1', '-nostdin', '-timeout', '900s'],
    { stdio: 'ignore' },
  );
  try {
    await spawned(uas, 'sipp');
    const me = await api(httpPort, '/Accounts/bench%40example.test.json', null);
    const numbers = { pause: '+15558000001', dial: '+15558000002', hold: '+15558000003' };
    for (const [path, number] of Object.entries(numbers))
      await api(httpPort, `/Accounts/${me.sid}/IncomingPhoneNumbers.json`, {
        PhoneNumber: number,
        VoiceUrl: `${markup.origin}/${path}`,
      });
    const target = `${SERVER_IP}:${sipPort}`;
    const base = ['-i', PEER_IP, '-t', 'u1', '-timeout', `${DURATION + 120}s`, '-max_recv_loops', '5000'];

    if (ONLY.includes('C')) {
      // C. Held calls: RSS per live call at the peak, first, on a fresh process (after a warm-up).
      await sipp(
        [target, ...base, '-p', String(await freePort(PEER_IP)), '-s', numbers.pause, '-r', '20', '-m', '40'],
        'uac-call-timed-expect-bye.xml',
      );
      await new Promise((r) => setTimeout(r, 2000));
      const rawRss0 = rssBytes(pid);
      const mem0 = await collectedMemory(inspectPort!);
      const before = await heapSnapshot(pid);
      if (before) console.log(`C. heap snapshot before the calls: ${before}`);
      const holdRate = 200;
      const rampMs = Math.ceil(HELD / holdRate) * 1000;
      // Every call holds long enough to be measured twice: just after the ramp (young calls, whose
      // INVITE server transactions still wait out Timer L = 64·T1 = 32 s for retransmissions) and once
      // every call is past Timer L (the steady state of a held call, the target's measure).
      const holdMs = rampMs + 40_000;
      const c = sipp(
        [
          target,
          ...base,
          '-p',
          String(await freePort(PEER_IP)),
          '-s',
          numbers.hold,
          '-r',
          String(holdRate),
          '-m',
          String(HELD),
          '-d',
          String(holdMs),
        ],
        'uac-call-timed-then-hangup.xml',
      );
      // Raw RSS rises and falls with the garbage collector: its highest reading during the ramp (every
      // 250 ms) is the conservative figure for young calls; held calls are read after a full GC.
      let rawPeak = 0;
      for (const end = Date.now() + rampMs + 2000; Date.now() < end; ) {
        rawPeak = Math.max(rawPeak, rssBytes(pid));
        await new Promise((r) => setTimeout(r, 250));
      }
      await new Promise((r) => setTimeout(r, 32_000));
      const memHeld = await collectedMemory(inspectPort!);
      const snapshot = await heapSnapshot(pid);
      if (snapshot) console.log(`C. heap snapshot of the held calls: ${snapshot}`);
      const cr = await c;
      const perCall = (bytes: number) => (bytes / Math.max(1, HELD) / 1024).toFixed(1);
      const MiB = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
      console.log(
        `C. ${HELD} held calls: ${cr.successful} ok, ${cr.failed} failed; after a full GC, main-process RSS ` +
          `${MiB(mem0.rss)} → ${MiB(memHeld.rss)} MiB = ${perCall(memHeld.rss - mem0.rss)} kB per live call ` +
          `(target < 40 kB), heap ${perCall(memHeld.heapUsed - mem0.heapUsed)} kB per call; ` +
          `raw RSS (no GC) ${MiB(rawRss0)} → peak ${MiB(rawPeak)} MiB during the ramp = ` +
          `${perCall(rawPeak - rawRss0)} kB per call (garbage, INVITE transactions in Timer L)`,
      );
    }
    if (ONLY.includes('A')) {
      // A. Pause 2 s + Hangup at each rate. A warm-up first, so the first rate does not pay for the
      // JIT and the connection pools.
      const pause = async (rate: number, calls: number) =>
        sipp(
          [
            target,
            ...base,
            '-p',
            String(await freePort(PEER_IP)),
            '-s',
            numbers.pause,
            '-r',
            String(rate),
            '-m',
            String(calls),
          ],
          'uac-call-timed-expect-bye.xml',
        );
      await pause(50, 100);
      // What the server spends with no call at all (timers, lease renewals, metrics, pools): part
      // of every figure per call below, the more so the lower the rate.
      await new Promise((r) => setTimeout(r, 3000));
      const idleStop = cpuWindow(pid);
      const idleStart = performance.now();
      await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
      const idleMsPerSecond = (idleStop().server * 1000) / ((performance.now() - idleStart) / 1000);
      console.log(
        `A. idle server (no call, ${IDLE_SECONDS} s): ${idleMsPerSecond.toFixed(1)} ms CPU per second`,
      );
      for (const rate of RATES) {
        await new Promise((r) => setTimeout(r, 2000));
        const stop = cpuWindow(pid);
        const stopPostgres = await postgresWindow(ns.databaseUrl);
        const started = performance.now();
        const a = await pause(rate, rate * DURATION);
        // The last calls' records and callbacks are written just after their BYE.
        await new Promise((r) => setTimeout(r, 500));
        const cpu = stop();
        const windowSeconds = (performance.now() - started) / 1000;
        const pg = await stopPostgres();
        const perCall = (s: number) => ((s * 1000) / Math.max(1, a.successful)).toFixed(2);
        const countPerCall = (n: number) => (n / Math.max(1, a.successful)).toFixed(2);
        const netPerCall =
          Math.max(0, cpu.server * 1000 - idleMsPerSecond * windowSeconds) / Math.max(1, a.successful);
        console.log(
          `A. <Pause 2/><Hangup/> offered ${rate}/s for ${DURATION} s: achieved ` +
            `${(a.successful / Math.max(1, a.elapsed - 2)).toFixed(0)}/s, ${a.successful} ok, ${a.failed} failed ` +
            `(${a.retransmissions} sipp retransmissions); ` +
            `INVITE→200 p50 ${percentile(a.rtts, 50)} ms, p95 ${percentile(a.rtts, 95)} ms (= webhook overhead, ` +
            `the stub answers at once); CPU per call: server ${perCall(cpu.server)} ms ` +
            `(${netPerCall.toFixed(2)} ms over its idle figure), media engine ` +
            `${perCall(cpu.media)} ms; server system calls ${(cpu.syscalls / Math.max(1, a.successful)).toFixed(1)} ` +
            `and event-loop sleeps ${(cpu.sleeps / Math.max(1, a.successful)).toFixed(1)} per call; ` +
            `Postgres per call: ${perCall(pg.cpu)} ms CPU (${pg.backends} backends), ` +
            `${countPerCall(pg.commits)} commits, ${countPerCall(pg.inserted)} rows inserted, ` +
            `${countPerCall(pg.updated)} rows updated`,
        );
      }
    }
    if (ONLY.includes('B')) {
      // B. Dial to a sipp UAS, callers hold DIAL_SECONDS.
      const b = await sipp(
        [
          target,
          ...base,
          '-p',
          String(await freePort(PEER_IP)),
          '-s',
          numbers.dial,
          '-r',
          String(DIAL_RATE),
          '-m',
          String(DIAL_RATE * DIAL_SECONDS),
          '-d',
          String(DIAL_SECONDS * 1000),
        ],
        'uac-call-timed-then-hangup.xml',
      );
      console.log(
        `B. <Dial> to a sipp UAS, ${DIAL_RATE}/s, ${DIAL_SECONDS} s hold (≈${DIAL_RATE * DIAL_SECONDS} live dialogs): ` +
          `${b.successful} ok, ${b.failed} failed; post-dial delay p50 ${percentile(b.rtts, 50)} ms, p95 ${percentile(b.rtts, 95)} ms`,
      );
    }
  } finally {
    if (uas.exitCode === null && uas.pid) process.kill(uas.pid, 'SIGTERM');
    server.kill('SIGTERM');
    await once(server, 'exit');
    markup.server.close();
    await ns.dispose();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
