/**
 * bench:rest — REST read throughput with Basic auth (AuthToken) next to an Express hello-world,
 * both in their own processes, measured by autocannon from this one in the same run:
 *   1. GET one account in JSON                     goal ≥ 0.8 × Express, p99 < 20 ms
 *   2. GET the calls list in JSON (page of 50)     goal ≥ 0.5 × Express
 *   3. GET the sub-account list in JSON (20 items) (no goal; for comparison with older figures)
 * The Express peer is measured right before each target, so every ratio compares two runs made
 * seconds apart under the same machine load. The calls table is seeded with `--calls` rows for
 * the measured account (and as many for another one, so the list filters rather than reads all).
 * Usage: npm run bench:rest [-- --duration 10 --connections 50 --calls 20000 --runs 1 --only account]
 * BENCH_CPU_PROF=<dir> writes the server's CPU profile there (ops/bench/cpu-profile-summary.ts).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import autocannon from 'autocannon';
import { openDb, sql } from '../../src/store/postgres/db.js';
import { createNamespace } from '../lib/namespace.js';
import { freePort } from '../lib/ports.js';
import { spawned } from '../lib/tools.js';
import { cpuSeconds, ROOT, SERVER_IP, serverEntry, startServer } from './support.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const duration = arg('duration', 10);
const connections = arg('connections', 50);
const seededCalls = arg('calls', 20_000);
const runs = arg('runs', 1);
/** `--only account|calls|subaccounts` measures one target (for a CPU profile of one path). */
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined;
const WARMUP_S = 2;

interface Figures {
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly bad: number;
}

async function load(url: string, headers: Record<string, string>, seconds: number): Promise<Figures> {
  const r = await autocannon({ url, connections, duration: seconds, headers });
  return {
    rps: Math.round(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    max: r.latency.max,
    bad: r.non2xx + r.errors + r.timeouts,
  };
}

const show = (f: Figures) =>
  `${f.rps} req/s, p50 ${f.p50} ms, p99 ${f.p99} ms, max ${f.max} ms, non-2xx/errors ${f.bad}`;

/** Express's hello world (expressjs.com "Hello world example") on its own port and process. */
async function startExpressPeer(): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const port = await freePort(SERVER_IP);
  const code = `const app = require('express')();
app.get('/', (req, res) => { res.send('Hello World!') });
app.listen(${port}, '${SERVER_IP}', () => console.log('listening'));`;
  const child = spawn(process.execPath, ['-e', code], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  await spawned(child, 'node');
  child.on('error', (e) => console.error('express peer:', e));
  const [chunk] = (await once(child.stdout, 'data')) as [Buffer];
  if (!chunk.toString().includes('listening')) throw new Error('express peer did not start');
  return {
    url: `http://${SERVER_IP}:${port}/`,
    pid: child.pid as number,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** `n` completed calls of `accountSid`, one a second apart, written straight into the record. */
async function seedCalls(databaseUrl: string, accountSid: string, n: number): Promise<void> {
  const db = openDb(databaseUrl, 1);
  try {
    await db.query(sql`
      INSERT INTO calls (sid, account_sid, to_address, from_address, status, start_time, end_time, duration,
        direction, sip_response_code, date_created, date_updated)
      SELECT 'CA' || md5(${accountSid} || g::text), ${accountSid}, '+1555' || lpad(g::text, 7, '0'),
        'alice', 'completed', ts, ts + interval '30 seconds', 30, 'outbound-api', 200, ts, ts + interval '30 seconds'
      FROM generate_series(1, ${n}) AS g, LATERAL (SELECT now() - make_interval(secs => g) AS ts) t`);
    await db.query(sql`ANALYZE calls`);
  } finally {
    await db.dispose();
  }
}

async function main() {
  const ns = await createNamespace('benchrest');
  // Build first: the windows printed below count from the server's start, as its CPU profile does.
  serverEntry();
  const started = performance.now();
  const server = await startServer(ns, null);
  const sinceStart = () => ((performance.now() - started) / 1000).toFixed(1);
  const peer = await startExpressPeer();
  try {
    const { base, admin } = server;
    const auth = {
      authorization: `Basic ${Buffer.from(`${admin.sid}:${admin.auth_token}`).toString('base64')}`,
    };
    let other = '';
    for (let i = 0; i < 20; i++) {
      const r = await fetch(`${base}/2012-04-24/Accounts.json`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
        body: `EmailAddress=sub${i}%40example.test&Password=password-123&Role=Developer`,
      });
      if (!r.ok) throw new Error(`sub-account create: ${r.status} ${await r.text()}`);
      other ||= ((await r.json()) as { sid: string }).sid;
    }
    await seedCalls(ns.databaseUrl, admin.sid, seededCalls);
    await seedCalls(ns.databaseUrl, other, seededCalls);

    console.log(
      `bench:rest — server pid ${server.child.pid}, node ${process.version}, autocannon in this process, ` +
        `${connections} connections, ${duration} s per run after ${WARMUP_S} s warm-up, ${seededCalls} calls seeded`,
    );
    const targets = [
      {
        key: 'account',
        title: 'GET account (JSON, Basic with AuthToken)',
        path: `/2012-04-24/Accounts/${admin.sid}.json`,
      },
      {
        key: 'calls',
        title: 'GET calls list (JSON, page of 50)',
        path: `/2012-04-24/Accounts/${admin.sid}/Calls.json?PageSize=50`,
      },
      {
        key: 'subaccounts',
        title: 'GET sub-account list (JSON, 20 items)',
        path: '/2012-04-24/Accounts.json',
      },
    ].filter((t) => only === undefined || t.key === only);
    for (let run = 1; run <= runs; run++) {
      if (runs > 1) console.log(`run ${run} of ${runs}`);
      for (const t of targets) {
        await load(peer.url, {}, WARMUP_S);
        const peerCpu0 = cpuSeconds(peer.pid);
        const express = await load(peer.url, {}, duration);
        const peerCpuMs = ((cpuSeconds(peer.pid) - peerCpu0) * 1000) / Math.max(1, express.rps * duration);
        await load(base + t.path, auth, WARMUP_S);
        const from = sinceStart();
        const pid = server.child.pid as number;
        const cpu0 = cpuSeconds(pid);
        const ours = await load(base + t.path, auth, duration);
        const cpuMs = ((cpuSeconds(pid) - cpu0) * 1000) / Math.max(1, ours.rps * duration);
        const window = `${from}–${sinceStart()} s after the server started`;
        console.log(`${t.title}: ${show(ours)}, server CPU ${cpuMs.toFixed(3)} ms/request [${window}]`);
        console.log(
          `  Express hello-world just before: ${show(express)}, CPU ${peerCpuMs.toFixed(3)} ms/request`,
        );
        console.log(
          `  ratio ${(ours.rps / express.rps).toFixed(2)} × Express in req/s; ` +
            `${(peerCpuMs / cpuMs).toFixed(2)} × in CPU per request (less sensitive to the machine's other load)`,
        );
      }
    }
  } finally {
    await peer.stop();
    server.child.kill('SIGTERM');
    await once(server.child, 'exit');
    await ns.dispose();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
