/**
 * Shared pieces of the SIP benchmarks: the server in its own process (real Redis and Postgres, a
 * fresh namespace), sipp runs with -trace_stat/-trace_rtt read back, process CPU from /proc.
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { openDb, sql } from '../../src/store/postgres/db.js';
import { collectedMemory } from '../lib/memory.js';
import type { createNamespace } from '../lib/namespace.js';
import { freePort } from '../lib/ports.js';
import { type ServerProcess, startServerProcess } from '../lib/server-process.js';
import { spawned } from '../lib/tools.js';

export const ROOT = resolve(import.meta.dirname, '../..');
export const SERVER_IP = '127.0.0.1';
export { collectedMemory };
export const PEER_IP = '127.0.0.2';
export const ADMIN = { email: 'bench@example.test', password: 'bench-password' };

/** Resident set size of a process, bytes, from /proc. */
export function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

/**
 * With BENCH_HEAP_SNAPSHOT=<dir>, asks the server (started by startServer) for a heap snapshot and waits
 * until it is written; without it, does nothing. Open the file in Chrome DevTools → Memory.
 */
export async function heapSnapshot(pid: number): Promise<string | null> {
  const dir = process.env.BENCH_HEAP_SNAPSHOT;
  if (!dir) return null;
  const before = new Set(readdirSync(dir));
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 600; i++) {
    await new Promise((r) => setTimeout(r, 500));
    const file = readdirSync(dir).find((f) => !before.has(f) && f.endsWith('.heapsnapshot'));
    // The file is complete once its size stops changing.
    if (file) {
      const size = statSync(`${dir}/${file}`).size;
      await new Promise((r) => setTimeout(r, 1000));
      if (statSync(`${dir}/${file}`).size === size) return `${dir}/${file}`;
    }
  }
  return null;
}

/** CPU seconds (user + system) of a process so far, from /proc. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * The whole machine's busy share over a window, from /proc/stat: `stop()` gives the fraction of all
 * cores' time spent not idle (0–1) since `machineBusy()` was called. Where every process shares the
 * box, this says how much room a step left for anything more.
 */
export function machineBusy(): () => number {
  const read = () => {
    const cpu = readFileSync('/proc/stat', 'utf8')
      .split('\n', 1)[0]!
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    // idle and iowait are the 4th and 5th fields; the rest is work.
    const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
    const total = cpu.slice(0, 8).reduce((a, b) => a + b, 0);
    return { idle, total };
  };
  const start = read();
  return () => {
    const end = read();
    const total = end.total - start.total;
    return total > 0 ? 1 - (end.idle - start.idle) / total : 0;
  };
}

/**
 * The processes `pid` started (the server's media engine), from /proc/<pid>/task/<tid>/children,
 * or by scanning every process's parent where the kernel does not offer that file.
 */
export function childPids(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8')
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map(Number),
    );
  } catch {
    return readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .filter((d) => {
        try {
          return Number(readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]) === pid;
        } catch {
          return false; // exited meanwhile
        }
      })
      .map(Number);
  }
}

/** The server's media engine process (its child running media/engine/entry), or null while it is down. */
export function mediaEnginePid(serverPid: number): number | null {
  for (const child of childPids(serverPid)) {
    try {
      if (readFileSync(`/proc/${child}/cmdline`, 'utf8').includes('media/engine/entry')) return child;
    } catch {
      // exited meanwhile
    }
  }
  return null;
}

/**
 * System calls (read and write kinds, /proc/<pid>/io) of a process and the times its main thread
 * went to sleep (voluntary context switches: each is a wake-up later). Counts, so unlike CPU time
 * they barely move when other work shares the cores.
 */
export function syscallCounts(pid: number): { syscalls: number; sleeps: number } {
  try {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (text: string, name: string) =>
      Number(new RegExp(`^${name}:\\s*(\\d+)`, 'm').exec(text)?.[1] ?? 0);
    return {
      syscalls: field(io, 'syscr') + field(io, 'syscw'),
      sleeps: field(status, 'voluntary_ctxt_switches'),
    };
  } catch {
    return { syscalls: 0, sleeps: 0 };
  }
}

/**
 * CPU of the server and of its media engine over a window: `start()` reads both, the returned
 * `stop()` gives the seconds each spent since (and the server's system calls and sleeps, see
 * syscallCounts). An engine that (re)started inside the window counts from zero.
 */
export function cpuWindow(
  serverPid: number,
): () => { server: number; media: number; syscalls: number; sleeps: number } {
  const server0 = cpuSeconds(serverPid);
  const counts0 = syscallCounts(serverPid);
  const mediaPid0 = mediaEnginePid(serverPid);
  const media0 = mediaPid0 === null ? 0 : cpuSeconds(mediaPid0);
  return () => {
    const mediaPid = mediaEnginePid(serverPid);
    const media = mediaPid === null ? 0 : cpuSeconds(mediaPid) - (mediaPid === mediaPid0 ? media0 : 0);
    const counts = syscallCounts(serverPid);
    return {
      server: cpuSeconds(serverPid) - server0,
      media,
      syscalls: counts.syscalls - counts0.syscalls,
      sleeps: counts.sleeps - counts0.sleeps,
    };
  };
}

/** What the Postgres backends of one database did over a window (see postgresWindow). */
export interface PostgresWork {
  /** CPU seconds (user + system) of the database's backend processes. */
  readonly cpu: number;
  /** Backends seen serving the database during the window. */
  readonly backends: number;
  /** Committed transactions (each autocommit statement is one), rows inserted and rows updated. */
  readonly commits: number;
  readonly inserted: number;
  readonly updated: number;
}

/**
 * Postgres's side of a window, for the database of `databaseUrl` (its backends are local
 * processes): CPU from /proc/<pid>/stat of every backend pg_stat_activity lists for that database
 * (polled every 250 ms, so a backend that leaves during the window still counts what it spent up to
 * its last reading), and the database's commits and rows written from pg_stat_database. The watcher
 * connects to the `postgres` database, so its own backend and statements are not counted.
 *
 * Backends report their counters to pg_stat_database at most once a second while busy, and an idle
 * one only 10 s after its last statement: `stop()` reads the CPU at once and the counters 11 s later
 * (what the server does in those seconds, idle, is counted too: a few statements).
 */
export async function postgresWindow(databaseUrl: string): Promise<() => Promise<PostgresWork>> {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.replace(/^\//, ''));
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const db = openDb(admin.toString(), 1);
  const counters = async () => {
    const [row] = await db.query(sql`
      SELECT xact_commit, tup_inserted, tup_updated FROM pg_stat_database
      WHERE datname = ${name}`);
    return {
      commits: Number(row?.xact_commit ?? 0),
      inserted: Number(row?.tup_inserted ?? 0),
      updated: Number(row?.tup_updated ?? 0),
    };
  };
  const backends = async () =>
    (await db.query(sql`SELECT pid FROM pg_stat_activity WHERE datname = ${name}`)).map(
      (r) => r.pid as number,
    );
  const readCpu = (pid: number): number | null => {
    try {
      return cpuSeconds(pid);
    } catch {
      return null; // exited
    }
  };
  // Per backend: its CPU at the start (0 for one that started later) and at its last reading.
  const seen = new Map<number, { first: number; last: number }>();
  const sample = (pids: readonly number[], starting: boolean) => {
    for (const pid of pids) {
      const cpu = readCpu(pid);
      if (cpu === null) continue;
      const s = seen.get(pid);
      if (s) s.last = cpu;
      else seen.set(pid, { first: starting ? cpu : 0, last: cpu });
    }
  };
  sample(await backends(), true);
  const start = await counters();
  let polling = Promise.resolve();
  const timer = setInterval(() => {
    polling = polling.then(async () => sample(await backends().catch(() => [...seen.keys()]), false));
  }, 250);
  return async () => {
    clearInterval(timer);
    await polling;
    sample([...seen.keys(), ...(await backends())], false);
    let cpu = 0;
    for (const s of seen.values()) cpu += s.last - s.first;
    await new Promise((r) => setTimeout(r, 11_000));
    const end = await counters();
    await db.dispose();
    return {
      cpu,
      backends: seen.size,
      commits: end.commits - start.commits,
      inserted: end.inserted - start.inserted,
      updated: end.updated - start.updated,
    };
  };
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export interface SippRun {
  successful: number;
  failed: number;
  /** Messages sipp sent again for want of an answer (a slow server's INVITEs, BYE responses...). */
  retransmissions: number;
  elapsed: number;
  rtts: number[];
}

/** Runs sipp in a scratch directory with -trace_stat/-trace_rtt and reads its figures back. */
export async function sipp(args: string[], scenario: string | null): Promise<SippRun> {
  const dir = mkdtempSync(join(tmpdir(), 'benchsip-'));
  try {
    const full = [...args, '-nostdin', '-trace_stat', '-fd', '1', '-trace_rtt', '-rtt_freq', '1'];
    if (scenario) {
      copyFileSync(join(ROOT, 'ops/sipp', scenario), join(dir, scenario));
      full.push('-sf', scenario);
    }
    const child = spawn('sipp', full, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    await spawned(child, 'sipp');
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const [code] = (await once(child, 'close')) as [number];
    const files = readdirSync(dir);
    const stat = files.find((f) => f.endsWith('_.csv'));
    if (!stat) throw new Error(`sipp wrote no statistics (exit ${code}): ${stderr.slice(0, 500)}`);
    const lines = readFileSync(join(dir, stat), 'utf8').trim().split('\n');
    const head = lines[0]!.split(';');
    const last = lines[lines.length - 1]!.split(';');
    const col = (name: string) => last[head.indexOf(name)] ?? '';
    // HH:MM:SS:microseconds
    const [h, m, s, us] = col('ElapsedTime(C)').split(':').map(Number);
    const rttFile = files.find((f) => f.endsWith('_rtt.csv'));
    const rtts = rttFile
      ? readFileSync(join(dir, rttFile), 'utf8')
          .trim()
          .split('\n')
          .slice(1)
          .map((l) => Number(l.split(';')[1]))
          .filter((v) => Number.isFinite(v))
          .sort((a, b) => a - b)
      : [];
    return {
      successful: Number(col('SuccessfulCall(C)')),
      failed: Number(col('FailedCall(C)')),
      retransmissions: Number(col('Retransmissions(C)')),
      elapsed: (h ?? 0) * 3600 + (m ?? 0) * 60 + (s ?? 0) + (us ?? 0) / 1e6,
      rtts,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A benchmark server: its process, HTTP base URL and the Super Admin (sid and AuthToken). */
export interface BenchServer extends ServerProcess {
  /** The V8 inspector's port on SERVER_IP when started with `inspect` (see collectedMemory). */
  readonly inspectPort: number | null;
}

/**
 * The server as operators run it: the build (`npm run build`, made once per benchmark run), so the
 * figures carry no tsx overhead; BENCH_TSX=1 runs the TypeScript sources instead.
 * BENCH_SERVER_DIR=<checkout> runs that checkout's existing build (`<checkout>/dist/main.js`, e.g.
 * an older commit built in /tmp) instead, so "before" and "after" run on the same machine and bench.
 */
export const SERVER_DIR = process.env.BENCH_SERVER_DIR ? resolve(process.env.BENCH_SERVER_DIR) : ROOT;
let built = false;
/**
 * Builds the server now if this run will need the build (see SERVER_DIR); startServer otherwise
 * builds on first use. A bench that times windows from the server's start calls this first, so
 * the build's minute is not counted as the server's.
 */
export function serverEntry(): 'src' | 'dist' {
  if (SERVER_DIR !== ROOT) {
    if (!existsSync(join(SERVER_DIR, 'dist/main.js')))
      throw new Error(`BENCH_SERVER_DIR: no ${SERVER_DIR}/dist/main.js (run npm run build there)`);
    return 'dist';
  }
  if (process.env.BENCH_TSX === '1') return 'src';
  if (!built) {
    execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    built = true;
  }
  return 'dist';
}

/**
 * BENCH_LOOP_LAG=1: the server prints each second in which its event loop stalled ≥ 20 ms
 * (ops/bench/loop-lag.mjs); BENCH_TRACE_GC=1: V8 prints every collection (`--trace-gc`).
 */
function diagnostics(): string[] {
  return [
    ...(process.env.BENCH_LOOP_LAG === '1' ? ['--import', join(ROOT, 'ops/bench/loop-lag.mjs')] : []),
    ...(process.env.BENCH_TRACE_GC === '1' ? ['--trace-gc'] : []),
  ];
}

/**
 * Starts the server (see serverEntry) in its own process on a fresh namespace (SIP on SERVER_IP:`sipPort`, or
 * SIP_ENABLED=false without one); resolves once the API answers.
 */
export async function startServer(
  ns: Awaited<ReturnType<typeof createNamespace>>,
  sipPort: number | null,
  env: Record<string, string> = {},
  opts: { inspect?: boolean } = {},
): Promise<BenchServer> {
  // The inspector (loopback only) lets a benchmark collect garbage before reading memory.
  const inspectPort = opts.inspect ? await freePort(SERVER_IP) : null;
  const inspect = inspectPort ? [`--inspect=${SERVER_IP}:${inspectPort}`] : [];
  // BENCH_CPU_PROF=<dir> writes a V8 CPU profile of the server there (open it in Chrome DevTools).
  // (Written when the server exits; the directory is made absolute as the server may run elsewhere.)
  const prof = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', '--cpu-prof-dir', resolve(process.env.BENCH_CPU_PROF)]
    : [];
  // BENCH_HEAP_SNAPSHOT=<dir>: the server writes a heap snapshot there on SIGUSR2 (see heapSnapshot()).
  const heap = process.env.BENCH_HEAP_SNAPSHOT
    ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${process.env.BENCH_HEAP_SNAPSHOT}`]
    : [];
  // BENCH_SERVER_ARGS='--heap-prof --heap-prof-dir=/tmp/x': more node options for the server, as given
  // (space-separated; a relative directory is relative to the server's checkout).
  const extra = process.env.BENCH_SERVER_ARGS?.split(/\s+/).filter(Boolean) ?? [];
  const server = await startServerProcess(ns, {
    entry: serverEntry(),
    root: SERVER_DIR,
    admin: ADMIN,
    host: SERVER_IP,
    sipPort,
    nodeArgs: [...prof, ...heap, ...inspect, ...diagnostics(), ...extra],
    env: { LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  return { ...server, inspectPort };
}

/** The customer's markup server of a benchmark: one document per path, answered at once. */
export async function markupServer(documents: Record<string, string>) {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const doc = documents[(req.url ?? '').split('?')[0] ?? ''];
      res.writeHead(doc ? 200 : 404, { 'content-type': 'text/xml' });
      res.end(doc ? `<?xml version="1.0"?><Response>${doc}</Response>` : '');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const BENCH_AUTH = `Basic ${Buffer.from(`${encodeURIComponent(ADMIN.email)}:${ADMIN.password}`).toString('base64')}`;

/** The bench admin's REST call (`path` under /2012-04-24): GET, or POST with a form; throws on non-2xx. */
export async function benchApi<T = Record<string, string>>(
  base: string,
  path: string,
  form: Record<string, string> | null,
): Promise<T> {
  const r = await fetch(`${base}/2012-04-24${path}`, {
    method: form ? 'POST' : 'GET',
    headers: { authorization: BENCH_AUTH, 'content-type': 'application/x-www-form-urlencoded' },
    ...(form ? { body: new URLSearchParams(form).toString() } : {}),
  });
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}
