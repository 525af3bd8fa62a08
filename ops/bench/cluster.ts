/**
 * bench:cluster — two Switchboard nodes behind Kamailio (ops/kamailio/switchboard.cfg) on this box,
 * one Postgres and one Redis, every process started here and stopped by its pid.
 *   1. Single node: sipp straight to node A, inbound call with markup `<Pause length="2"/><Hangup/>`,
 *      at each offered rate of `--rates` (`--duration` s each): achieved calls/s (sipp's successful
 *      calls / its elapsed time less the last call's 2 s), failures, INVITE→200 p50/p95. The node's
 *      capacity is the highest achieved rate with 0 failures and p95 < `--p95` ms.
 *   2. The same steps through Kamailio round-robin over nodes A and B: capacity, and its ratio to (1).
 *      Goal ≥ 1.8×, which presumes a core per node: here both nodes, Kamailio and sipp share the box.
 *   3. Kamailio's own ceiling: the same front (same config) before a sipp UAS instead of the nodes,
 *      stepped `--front-rates`, highest clean rate and Kamailio's CPU ms per call, so the front is
 *      never the bottleneck unnoticed.
 *   4. REST command forwarding: a call held on node A (inbound straight to A, so A owns it), then
 *      `--requests` sequential `POST /Calls/{sid}.json` (Mute toggled) on A (owner) and on B (which
 *      forwards to A over NodeRpc): p50/p95 of each, and the p95 difference. Goal < 5 ms.
 * Usage: npm run bench:cluster [-- --rates 150,300,450,600 --duration 15 --p95 50
 *          --front-rates 1000,2000,3000,4000,5000 --requests 200 --only 1234]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { startKamailio } from '../lib/kamailio.js';
import { createNamespace } from '../lib/namespace.js';
import { freePort } from '../lib/ports.js';
import { spawned } from '../lib/tools.js';
import {
  type BenchServer,
  benchApi,
  childPids,
  cpuSeconds,
  machineBusy,
  markupServer,
  PEER_IP,
  percentile,
  ROOT,
  SERVER_IP,
  sipp,
  startServer,
} from './support.js';

const argText = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : (process.argv[i + 1] ?? fallback);
};
const argList = (name: string, fallback: string) => {
  const list = argText(name, fallback);
  const values = list.split(',').map(Number);
  if (!values.length || values.some((v) => !(v > 0))) throw new Error(`--${name}: expected e.g. ${fallback}`);
  return values;
};
const RATES = argList('rates', '150,300,450,600');
const FRONT_RATES = argList('front-rates', '1000,2000,3000,4000,5000');
const DURATION = Number(argText('duration', '15'));
const P95_MS = Number(argText('p95', '50'));
const REQUESTS = Number(argText('requests', '200'));
const ONLY = argText('only', '1234');
const FRONT_IP = '127.0.0.5';
const UAS_IP = '127.0.0.3';

const api = (node: BenchServer, path: string, form: Record<string, string> | null) =>
  benchApi<Record<string, unknown>>(node.base, path, form);

interface Step {
  rate: number;
  achieved: number;
  failed: number;
  p50: number;
  p95: number;
  /** The machine's busy share (all cores) during the step. */
  machine: number;
  clean: boolean;
}

/** Offers each rate in turn (stopping after the first unclean step); the highest clean achieved rate. */
async function stepped(
  label: string,
  rates: readonly number[],
  run: (rate: number) => Promise<Awaited<ReturnType<typeof sipp>>>,
  holdSeconds: number,
  extra: () => string = () => '',
): Promise<{ steps: Step[]; best: Step | null }> {
  const steps: Step[] = [];
  for (const rate of rates) {
    await new Promise((r) => setTimeout(r, 2000));
    const busy = machineBusy();
    const s = await run(rate);
    const machine = busy();
    const step: Step = {
      rate,
      achieved: s.successful / Math.max(1, s.elapsed - holdSeconds),
      failed: s.failed,
      p50: percentile(s.rtts, 50),
      p95: percentile(s.rtts, 95),
      machine,
      clean: false,
    };
    step.clean = step.failed === 0 && step.p95 < P95_MS && step.achieved >= rate * 0.9;
    steps.push(step);
    console.log(
      `${label} offered ${rate}/s for ${DURATION} s: achieved ${step.achieved.toFixed(0)}/s, ${s.successful} ok, ` +
        `${s.failed} failed (${s.retransmissions} retransmissions); INVITE→200 p50 ${step.p50} ms, p95 ${step.p95} ms; ` +
        `machine ${(step.machine * 100).toFixed(0)} % busy` +
        `${extra()}${step.clean ? '' : '  ← not clean'}`,
    );
    if (!step.clean) break;
  }
  const clean = steps.filter((s) => s.clean);
  return { steps, best: clean.length ? clean[clean.length - 1]! : null };
}

/** CPU seconds of a process and its children (Kamailio's workers) so far. */
function treeCpu(pid: number): number {
  return [pid, ...childPids(pid)].reduce((sum, p) => {
    try {
      return sum + cpuSeconds(p);
    } catch {
      return sum; // exited meanwhile
    }
  }, 0);
}

async function stopChild(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null || !child.pid) return;
  const exited = once(child, 'exit');
  process.kill(child.pid, 'SIGTERM');
  await exited;
}

async function main() {
  console.log(
    `bench:cluster — node ${process.version}, ${availableParallelism()} cores: both nodes, their media engines, ` +
      'Kamailio, sipp, Redis and Postgres share them (the 1.8× goal presumes a core per node)',
  );
  const ns = await createNamespace('benchcluster');
  const markup = await markupServer({
    '/pause': '<Pause length="2"/><Hangup/>',
    '/hold': '<Pause length="600"/>',
  });
  const nodes: BenchServer[] = [];
  const others: ChildProcess[] = [];
  const fronts: Array<{ stop(): Promise<void> }> = [];
  const summary: string[] = [];
  try {
    for (let i = 0; i < 2; i++) {
      // One node first: it migrates the database before the other starts.
      nodes.push(
        await startServer(ns, await freePort(SERVER_IP), {
          SIP_TCP: 'false',
          ACCOUNT_CPS: '10000',
          ACCOUNT_MAX_CONCURRENT_CALLS: '100000',
          INSTANCE_ID: `bench-node-${i + 1}`,
          RTP_PORT_MIN: String(30000 + i * 10000),
          RTP_PORT_MAX: String(39999 + i * 10000),
        }),
      );
    }
    const [a, b] = nodes as [BenchServer, BenchServer];
    const me = await api(a, '/Accounts/bench%40example.test.json', null);
    const numbers = { pause: '+15558100001', hold: '+15558100002' };
    for (const [path, number] of Object.entries(numbers))
      await api(a, `/Accounts/${me.sid}/IncomingPhoneNumbers.json`, {
        PhoneNumber: number,
        VoiceUrl: `${markup.origin}/${path}`,
      });
    const base = ['-i', PEER_IP, '-t', 'u1', '-timeout', `${DURATION + 120}s`, '-max_recv_loops', '5000'];
    const pause = async (target: string, rate: number, calls: number) =>
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

    let single: Step | null = null;
    if (ONLY.includes('1')) {
      const target = `${SERVER_IP}:${a.sipPort}`;
      await pause(target, 50, 100); // warm-up: JIT, pools
      single = (await stepped('1. single node:', RATES, (r) => pause(target, r, r * DURATION), 2)).best;
      summary.push(
        `single node: ${single ? `${single.achieved.toFixed(0)} calls/s (p95 ${single.p95} ms)` : 'no clean step'}`,
      );
      // Calls cost the box's CPU whichever node takes them: the single node's step already used
      // this share of every core, so no number of nodes on this box can go past its inverse.
      if (single)
        summary.push(
          `  the machine was ${(single.machine * 100).toFixed(0)} % busy (all ${availableParallelism()} cores) at that step: ` +
            `any split of the same work on this box is bounded by ${(1 / Math.max(single.machine, 0.01)).toFixed(2)}× it`,
        );
    }
    if (ONLY.includes('2')) {
      const front = await startKamailio({
        host: FRONT_IP,
        port: await freePort(FRONT_IP),
        nodes: nodes.map((n) => `${SERVER_IP}:${n.sipPort}`),
        shmMb: 1024,
      });
      fronts.push(front);
      const target = `${front.host}:${front.port}`;
      await pause(target, 50, 100);
      const kpid = front.child.pid!;
      let cpu0 = 0;
      const { best } = await stepped(
        '2. two nodes via Kamailio:',
        RATES,
        (r) => {
          cpu0 = treeCpu(kpid);
          return pause(target, r, r * DURATION);
        },
        2,
        () => `; Kamailio CPU ${(treeCpu(kpid) - cpu0).toFixed(1)} s`,
      );
      const ratio = single && best ? best.achieved / single.achieved : Number.NaN;
      summary.push(
        `two nodes via Kamailio: ${best ? `${best.achieved.toFixed(0)} calls/s (p95 ${best.p95} ms)` : 'no clean step'}; ` +
          `ratio ${Number.isNaN(ratio) ? 'n/a (a side had no clean step)' : `${ratio.toFixed(2)}×`} (goal ≥ 1.8×: ${ratio >= 1.8 ? 'met' : 'NOT met'})`,
      );
      await front.stop();
    }
    if (ONLY.includes('3')) {
      // A callee that echoes Record-Route (sipp's built-in uas does not); -aa: it answers Kamailio's OPTIONS probes with 200, so the dispatcher keeps it up.
      const uasPort = await freePort(UAS_IP);
      const uas = spawn(
        'sipp',
        [
          ...[
            '-sf',
            join(ROOT, 'ops/sipp/uas-answer-expect-bye.xml'),
            '-aa',
            '-i',
            UAS_IP,
            '-p',
            String(uasPort),
          ],
          ...['-t', 'u1', '-nostdin', '-timeout', '900s', '-max_recv_loops', '5000'],
        ],
        { stdio: 'ignore' },
      );
      others.push(uas);
      await spawned(uas, 'sipp');
      const front = await startKamailio({
        host: FRONT_IP,
        port: await freePort(FRONT_IP),
        nodes: [`${UAS_IP}:${uasPort}`],
        shmMb: 1024,
      });
      fronts.push(front);
      const target = `${front.host}:${front.port}`;
      const kpid = front.child.pid!;
      const call = async (rate: number) =>
        sipp(
          [
            target,
            ...base,
            '-p',
            String(await freePort(PEER_IP)),
            '-s',
            'uas',
            '-r',
            String(rate),
            '-m',
            String(rate * DURATION),
            '-d',
            '1000',
            // A call that lost a message under load fails after 10 s instead of holding sipp open.
            '-recv_timeout',
            '10000',
          ],
          'uac-call-timed-then-hangup.xml',
        );
      await call(200);
      let cpu0 = 0;
      let calls = 0;
      const { best } = await stepped(
        '3. Kamailio → sipp UAS:',
        FRONT_RATES,
        async (r) => {
          cpu0 = treeCpu(kpid);
          const s = await call(r);
          calls = s.successful;
          return s;
        },
        1,
        () =>
          `; Kamailio CPU ${(((treeCpu(kpid) - cpu0) * 1000) / Math.max(1, calls)).toFixed(3)} ms per call`,
      );
      summary.push(
        `Kamailio's own ceiling (→ sipp UAS): ${best ? `≥ ${best.achieved.toFixed(0)} calls/s (p95 ${best.p95} ms)` : 'no clean step'}` +
          ` — ${best && best.rate === FRONT_RATES[FRONT_RATES.length - 1] ? 'the highest step offered, clean' : 'the last clean step'}`,
      );
      await front.stop();
      await stopChild(uas);
    }
    if (ONLY.includes('4')) {
      // A call held on A (inbound straight to A: A owns it); the caller waits for the BYE.
      const held = sipp(
        [
          `${SERVER_IP}:${a.sipPort}`,
          ...base,
          '-p',
          String(await freePort(PEER_IP)),
          '-s',
          numbers.hold,
          '-m',
          '1',
        ],
        'uac-call-timed-expect-bye.xml',
      );
      let sid = '';
      for (let i = 0; i < 50 && !sid; i++) {
        await new Promise((r) => setTimeout(r, 200));
        const page = await api(a, `/Accounts/${me.sid}/Calls.json?Status=in-progress`, null);
        const calls = (page.calls ?? []) as Array<{ sid: string; to?: string }>;
        sid = calls.find((c) => c.to?.includes(numbers.hold.slice(1)))?.sid ?? calls[0]?.sid ?? '';
      }
      if (!sid) throw new Error('4. the held call did not show as in-progress on node A');
      const path = `/Accounts/${me.sid}/Calls/${sid}.json`;
      const timed = async (node: BenchServer) => {
        const times: number[] = [];
        for (let i = 0; i < REQUESTS; i++) {
          const t0 = performance.now();
          await api(node, path, { Mute: i % 2 === 0 ? 'true' : 'false' });
          times.push(performance.now() - t0);
        }
        return times.sort((x, y) => x - y);
      };
      await timed(a);
      await timed(b); // warm-up of both paths
      const owner = await timed(a);
      const forwarded = await timed(b);
      const f = (ms: number) => ms.toFixed(2);
      const overhead = percentile(forwarded, 95) - percentile(owner, 95);
      console.log(
        `4. POST /Calls/{sid}.json (Mute toggled), ${REQUESTS} sequential each: owner p50 ${f(percentile(owner, 50))} ms, ` +
          `p95 ${f(percentile(owner, 95))} ms; non-owner (forwarded) p50 ${f(percentile(forwarded, 50))} ms, ` +
          `p95 ${f(percentile(forwarded, 95))} ms`,
      );
      summary.push(
        `REST forward overhead (p95 non-owner − owner): ${f(overhead)} ms, p50 ` +
          `${f(percentile(forwarded, 50) - percentile(owner, 50))} ms (goal < 5 ms: ${overhead < 5 ? 'met' : 'NOT met'})`,
      );
      await api(a, path, { Status: 'completed' });
      const h = await held;
      if (h.failed) console.log(`4. the held call's caller saw ${h.failed} failure(s)`);
    }
    console.log(`\nSummary (same run, ${availableParallelism()} cores shared by everything):`);
    for (const line of summary) console.log(`  ${line}`);
  } finally {
    for (const front of fronts) await front.stop();
    for (const child of others) await stopChild(child);
    for (const node of nodes) await stopChild(node.child);
    markup.server.close();
    await ns.dispose();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
