/**
 * bench:sip — the SIP core under sipp load, server in its own process.
 *   1. REGISTER with digest for 10,000 clients (sipp, CSV injection), stepping the rate, against the
 *      server and against Kamailio (ops/kamailio/registrar.cfg: in-memory usrloc, the same scenario
 *      and CSV) in the same run, one after the other at each step. A step passes with 0 failures,
 *      sipp's achieved rate ≥ 90 % of the offered one and its 401 → 200 p99 < 50 ms; each
 *      registrar's figure is the highest step it passes with every lower step passed too. Prints
 *      both, their ratio and each one's CPU per registration. Goal ≥ 12,000/s (≥ 0.5× Kamailio).
 *   2. Plain INVITE/200/ACK/BYE at 200 calls/s against a bare answerer (SipStack + SipLegs):
 *      achieved rate, failures, and the stack's CPU per call.
 *   With --floor, a third registrar at each step: a bare Node answerer (ops/bench/sip-floor.ts: the
 *   same digest and Redis binding write, none of our stack), so the run tells what our layers cost
 *   over Node's own floor on this machine, next to what Node costs over Kamailio.
 * Columns: the server's CPU per registration and the kernel's part of it (sends and receives), the
 * local redis-server's CPU per registration (the machine's shared Redis: other clients count too),
 * sipp's retransmissions and the machine's UDP receive-buffer drops during the step.
 * Rates are sipp's achieved ones (successful calls / elapsed), not `-r`. A warm-up pass registers
 * every user once first (the server's credential cache and both registrars' bindings are warm, as
 * in service, where clients refresh).
 * Usage: npm run bench:sip [-- --users 10000 --step 10 --rates 1000,2000,4000,... --no-kamailio --no-invites --floor]
 * Diagnostics: BENCH_LOOP_LAG=1 (event-loop stalls per second), BENCH_TRACE_GC=1, BENCH_CPU_PROF=<dir>,
 *   BENCH_SERVER_ARGS=<node options> (e.g. --heap-prof --heap-prof-dir=/abs/dir).
 */
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { newSid, SidPrefix } from '../../src/ids.js';
import { digestHa1 } from '../../src/sip/digest.js';
import { PgClientStore } from '../../src/store/postgres/client-repository.js';
import { openDb, sql } from '../../src/store/postgres/db.js';
import { createNamespace } from '../lib/namespace.js';
import { freePort } from '../lib/ports.js';
import { KAMAILIO_IP, KAMAILIO_MISSING, type Kamailio, startKamailio } from './kamailio.js';
import {
  cpuSeconds,
  PEER_IP,
  percentile,
  ROOT,
  SERVER_IP,
  type SippRun,
  sipp,
  startServer,
} from './support.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : (process.argv[i + 1] ?? fallback);
};
const USERS = Number(arg('users', '10000'));
const STEP_SECONDS = Number(arg('step', '10'));
const RATES = arg('rates', '500,1000,2000,3000,4000,6000,8000,10000,12000,16000,20000,24000')
  .split(',')
  .map(Number);

/** 10,000 enabled clients of the Super Admin's account in the default organization, straight into Postgres. */
async function provisionClients(databaseUrl: string, dir: string): Promise<string> {
  const db = openDb(databaseUrl, 4);
  try {
    const [admin] = await db.query(
      sql`SELECT a.sid, a.organization_sid, o.domain_name FROM accounts a
          JOIN organizations o ON o.sid = a.organization_sid WHERE a.email_address = 'bench@example.test'`,
    );
    const store = new PgClientStore(db);
    const at = new Date();
    const csv = ['SEQUENTIAL'];
    for (let start = 0; start < USERS; start += 200) {
      const batch = [];
      for (let i = start; i < Math.min(USERS, start + 200); i++) {
        const login = `user${i}`;
        const password = `pw-${i}-secret`;
        csv.push(`${login};[authentication username=${login} password=${password}]`);
        batch.push(
          store.insert({
            sid: newSid(SidPrefix.Client),
            accountSid: admin.sid,
            organizationSid: admin.organization_sid,
            login,
            friendlyName: login,
            apiVersion: '2012-04-24',
            status: 1,
            ha1: digestHa1(login, admin.domain_name, password),
            realm: admin.domain_name,
            voiceUrl: null,
            voiceMethod: 'POST',
            voiceFallbackUrl: null,
            voiceFallbackMethod: 'POST',
            voiceApplicationSid: null,
            dateCreated: at,
            dateUpdated: at,
          }),
        );
      }
      await Promise.all(batch);
    }
    const file = join(dir, 'users.csv');
    writeFileSync(file, `${csv.join('\n')}\n`);
    return file;
  } finally {
    await db.dispose();
  }
}

/** One registrar under test: where sipp sends and how to read its CPU. */
interface Target {
  readonly name: string;
  readonly address: string;
  readonly cpuSeconds: () => number;
  /** Of those, the seconds spent in the kernel (null when not read). */
  readonly systemSeconds: (() => number) | null;
  /** CPU seconds of the Redis server it writes to (null when it uses none). */
  readonly redisSeconds: (() => number) | null;
  /** Achieved rate and p99 of the highest step passed so far (every lower step passed too). */
  best: number;
  bestP99: number;
  /** A step missed the p99 limit: higher steps still run (for the record) but no longer count. */
  slow: boolean;
  /** A step failed calls or fell below 90 % of the offered rate: no higher step is run. */
  stopped: boolean;
}

const P99_LIMIT_MS = 50;
/** The bare Node answerer's loopback address (--floor). */
const FLOOR_IP = '127.0.0.6';

/** Kernel CPU seconds of a process so far (/proc stime): sends and receives, not JavaScript. */
function systemSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return Number(fields[12] ?? 0) / 100;
}

/**
 * The local redis-server's pid (the machine's shared one: other clients' work counts too), or null.
 * Its CPU belongs to a registration as much as the server's does: both share the machine's cores.
 */
function redisPid(): number | null {
  try {
    const out = execFileSync('pgrep', ['-x', 'redis-server'], { encoding: 'utf8' }).trim().split('\n');
    return out.length === 1 && out[0] ? Number(out[0]) : null;
  } catch {
    return null;
  }
}

/**
 * Datagrams the kernel dropped for a full socket receive buffer, machine-wide (/proc/net/snmp
 * RcvbufErrors): a registrar off the CPU too long loses requests here, and sipp then waits 500 ms
 * to retransmit. Other processes' drops count too.
 */
function udpReceiveDrops(): number {
  const lines = readFileSync('/proc/net/snmp', 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('Udp:'));
  const [head, values] = lines.map((l) => l.split(/\s+/));
  const i = head?.indexOf('RcvbufErrors') ?? -1;
  return i > 0 ? Number(values?.[i] ?? 0) : 0;
}

/** One sipp run of the REGISTER scenario at `rate`/s for `seconds` against `address`. */
async function registerRun(address: string, csv: string, rate: number, seconds: number): Promise<SippRun> {
  return sipp(
    [
      address,
      '-i',
      PEER_IP,
      '-p',
      String(await freePort(PEER_IP)),
      '-t',
      'u1',
      '-inf',
      csv,
      '-r',
      String(rate),
      '-m',
      String(rate * seconds),
      '-timeout',
      `${seconds * 4}s`,
      '-max_recv_loops',
      '5000',
      // sipp's own socket buffer overflows above about 12 k REGISTER/s with the default 64 KB.
      '-buff_size',
      '4194304',
    ],
    'uac-register-csv-expect-200.xml',
  );
}

async function step(t: Target, csv: string, rate: number): Promise<void> {
  const cpu0 = t.cpuSeconds();
  const sys0 = t.systemSeconds?.() ?? 0;
  const redis0 = t.redisSeconds?.() ?? 0;
  const drops0 = udpReceiveDrops();
  const r = await registerRun(t.address, csv, rate, STEP_SECONDS);
  const cpu = t.cpuSeconds() - cpu0;
  const sys = (t.systemSeconds?.() ?? 0) - sys0;
  const redis = (t.redisSeconds?.() ?? 0) - redis0;
  const perReg = (seconds: number) => ((seconds * 1000) / Math.max(1, r.successful)).toFixed(3);
  const drops = udpReceiveDrops() - drops0;
  const achieved = r.elapsed > 0 ? r.successful / r.elapsed : 0;
  const p50 = percentile(r.rtts, 50);
  const p99 = percentile(r.rtts, 99);
  const pass = r.failed === 0 && achieved >= rate * 0.9 && p99 < P99_LIMIT_MS;
  console.log(
    [
      String(rate).padStart(7),
      t.name.padEnd(11),
      achieved.toFixed(0).padStart(8),
      String(r.successful).padStart(7),
      String(r.failed).padStart(6),
      `${p50} / ${p99} / ${r.rtts[r.rtts.length - 1] ?? '?'}`.padStart(18),
      perReg(cpu).padStart(9),
      (t.systemSeconds ? perReg(sys) : '-').padStart(6),
      `${((cpu / Math.max(0.001, r.elapsed)) * 100).toFixed(0)} %`.padStart(6),
      (t.redisSeconds ? perReg(redis) : '-').padStart(6),
      String(r.retransmissions).padStart(7),
      String(drops).padStart(7),
      pass ? 'pass' : 'FAIL',
    ].join(' | '),
  );
  if (pass && !t.slow) {
    t.best = achieved;
    t.bestP99 = p99;
  }
  if (!pass) t.slow = true;
  if (r.failed > 0 || achieved < rate * 0.9) t.stopped = true;
}

async function registrations(): Promise<void> {
  const ns = await createNamespace('benchsip');
  const sipPort = await freePort(SERVER_IP);
  const { child: server } = await startServer(ns, sipPort, { SIP_TCP: 'false' });
  const dir = mkdtempSync(join(tmpdir(), 'benchsip-users-'));
  let kamailio: Kamailio | null = null;
  let floor: ChildProcess | null = null;
  try {
    if (!process.argv.includes('--no-kamailio')) {
      kamailio = await startKamailio(await freePort(KAMAILIO_IP));
      if (!kamailio) console.log(`Kamailio left out: ${KAMAILIO_MISSING}`);
    }
    const csv = await provisionClients(ns.databaseUrl, dir);
    const redis = redisPid();
    /** A registrar measured by a process's CPU (and its Redis's, when it writes there). */
    const processTarget = (name: string, address: string, pid: number, writesRedis: boolean): Target => ({
      name,
      address,
      cpuSeconds: () => cpuSeconds(pid),
      systemSeconds: () => systemSeconds(pid),
      redisSeconds: writesRedis && redis !== null ? () => cpuSeconds(redis) : null,
      best: 0,
      bestP99: Number.NaN,
      slow: false,
      stopped: false,
    });
    const targets: Target[] = [
      processTarget('switchboard', `${SERVER_IP}:${sipPort}`, server.pid as number, true),
    ];
    if (kamailio) {
      const k = kamailio;
      targets.push({
        ...processTarget('kamailio', `${KAMAILIO_IP}:${k.port}`, 0, false),
        cpuSeconds: () => k.cpuSeconds(),
        systemSeconds: null,
      });
    }
    if (process.argv.includes('--floor')) {
      const port = await freePort(FLOOR_IP);
      floor = fork(
        join(ROOT, 'ops/bench/sip-floor.ts'),
        [FLOOR_IP, String(port), csv, ns.redisUrl, `${ns.redisPrefix}:floor:`],
        { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
      );
      const exited = once(floor, 'exit').then(() => Promise.reject(new Error('sip-floor exited')));
      await Promise.race([once(floor, 'message'), exited]);
      targets.push(processTarget('bare node', `${FLOOR_IP}:${port}`, floor.pid as number, true));
    }
    console.log(
      `REGISTER with digest, ${USERS} users (CSV), ${STEP_SECONDS} s per step, UDP; server pid ${server.pid}` +
        (kamailio ? `, kamailio pid ${kamailio.child.pid}` : ''),
    );
    console.log(
      `2 cores shared by sipp, the registrar under test, Redis, Postgres and whatever else runs (compare within the run); load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    for (const t of targets) {
      const warmRate = Math.min(2000, RATES[0] ?? 1000);
      const warm = await registerRun(t.address, csv, warmRate, Math.ceil(USERS / warmRate));
      console.log(`warm-up ${t.name}: ${warm.successful} registered, ${warm.failed} failed`);
    }
    console.log(
      ' rate/s | registrar   | achieved |      ok | failed | p50 / p99 / max ms | CPU ms/reg | of it sys |  core | redis ms/reg | retrans |   drops | step',
    );
    for (const rate of RATES) {
      const running = targets.filter((t) => !t.stopped);
      if (!running.length) break;
      for (const t of running) await step(t, csv, rate);
    }
    const [ours] = targets as [Target];
    const peer = targets.find((t) => t.name === 'kamailio');
    const figure = (t: Target) =>
      t.best === 0
        ? 'no step passed'
        : `${t.best.toFixed(0)} registrations/s (p99 ${t.bestP99} ms)` +
          // Still passing at the last step: it is only known to do at least that much.
          (t.slow ? '' : ', every step passed: a lower bound');
    console.log(`highest step with 0 failures and p99 < ${P99_LIMIT_MS} ms:`);
    for (const t of targets) console.log(`  ${t.name.padEnd(11)} ${figure(t)}`);
    if (peer) {
      console.log(
        `ratio switchboard / kamailio: ${peer.best > 0 ? (ours.best / peer.best).toFixed(2) : 'n/a'} ` +
          '(goal: ≥ 12,000/s with p99 ≤ 50 ms at every step up to it, ≥ 0.5× Kamailio)',
      );
    }
    const bare = targets.find((t) => t.name === 'bare node');
    if (bare)
      console.log(
        `ratio switchboard / bare node: ${bare.best > 0 ? (ours.best / bare.best).toFixed(2) : 'n/a'} ` +
          "(compare the CPU per registration of their rows at each step: our layers over Node's floor)",
      );
  } finally {
    await kamailio?.stop();
    if (floor && floor.exitCode === null) {
      floor.kill('SIGTERM');
      await once(floor, 'exit');
    }
    server.kill('SIGTERM');
    await once(server, 'exit');
    rmSync(dir, { recursive: true, force: true });
    await ns.dispose();
  }
}

async function invites(): Promise<void> {
  const port = await freePort(SERVER_IP);
  const answerer = fork(join(ROOT, 'ops/bench/sip-answerer.ts'), [SERVER_IP, String(port)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  await once(answerer, 'message');
  try {
    const rate = 200;
    const seconds = 15;
    const cpu0 = cpuSeconds(answerer.pid!);
    const r = await sipp(
      [
        `${SERVER_IP}:${port}`,
        '-sn',
        'uac',
        '-i',
        PEER_IP,
        '-p',
        String(await freePort(PEER_IP)),
        '-t',
        'u1',
        '-r',
        String(rate),
        '-m',
        String(rate * seconds),
        '-d',
        '0',
        '-timeout',
        `${seconds * 4}s`,
      ],
      null,
    );
    const cpu = cpuSeconds(answerer.pid!) - cpu0;
    console.log(
      `INVITE/200/ACK/BYE at ${rate}/s for ${seconds} s: achieved ${(r.successful / Math.max(1, r.elapsed)).toFixed(0)}/s, ` +
        `${r.successful} ok, ${r.failed} failed; stack CPU ${((cpu * 1000) / Math.max(1, r.successful)).toFixed(2)} ms per call ` +
        `(${((cpu / Math.max(1, r.elapsed)) * 100).toFixed(0)} % of one core)`,
    );
  } finally {
    answerer.kill('SIGTERM');
    await once(answerer, 'exit');
  }
}

async function main() {
  console.log(`bench:sip — node ${process.version}`);
  await registrations();
  if (!process.argv.includes('--no-invites')) await invites();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
