/**
 * bench:sip — the SIP core under sipp load, server in its own process.
 *   1. REGISTER with digest for 10,000 clients (CSV injection), stepping the rate until failures
 *      appear: the highest achieved rate with 0 failures, and the 401 → 200 round trip p50/p95.
 *      Target on 2 cores, sipp included: ≥ 500 registrations/s with 0 failures.
 *   2. Plain INVITE/200/ACK/BYE at 200 calls/s against a bare answerer (SipStack + SipLegs):
 *      achieved rate, failures, and the stack's CPU per call.
 * Rates are sipp's achieved ones (successful calls / elapsed), not `-r`.
 * Usage: npm run bench:sip [-- --users 10000 --step 8 --rates 250,500,750,1000,1250,1500,2000]
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newSid, SidPrefix } from '../../src/ids.js';
import { digestHa1 } from '../../src/sip/digest.js';
import { PgClientStore } from '../../src/store/postgres/client-repository.js';
import { openDb, sql } from '../../src/store/postgres/db.js';
import { createNamespace } from '../lib/namespace.js';
import { freePort } from '../lib/ports.js';
import { cpuSeconds, PEER_IP, percentile, ROOT, SERVER_IP, sipp, startServer } from './support.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : (process.argv[i + 1] ?? fallback);
};
const USERS = Number(arg('users', '10000'));
const STEP_SECONDS = Number(arg('step', '8'));
const RATES = arg('rates', '250,500,750,1000,1250,1500,2000,2500').split(',').map(Number);

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

async function registrations(): Promise<void> {
  const ns = await createNamespace('benchsip');
  const sipPort = await freePort(SERVER_IP);
  const { child: server } = await startServer(ns, sipPort, { SIP_TCP: 'false' });
  const dir = mkdtempSync(join(tmpdir(), 'benchsip-users-'));
  try {
    const csv = await provisionClients(ns.databaseUrl, dir);
    console.log(
      `REGISTER with digest, ${USERS} users (CSV), ${STEP_SECONDS} s per step, UDP, server pid ${server.pid}`,
    );
    console.log(
      'target/s | achieved/s | ok     | failed | 401→200 p50 / p95 / max ms | server CPU ms/registration',
    );
    let best = 0;
    let bestP95 = Number.NaN;
    for (const rate of RATES) {
      const cpu0 = cpuSeconds(server.pid!);
      const r = await sipp(
        [
          `${SERVER_IP}:${sipPort}`,
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
          String(rate * STEP_SECONDS),
          '-timeout',
          `${STEP_SECONDS * 4}s`,
          '-max_recv_loops',
          '5000',
        ],
        'uac-register-csv-expect-200.xml',
      );
      const cpu = cpuSeconds(server.pid!) - cpu0;
      const achieved = r.elapsed > 0 ? r.successful / r.elapsed : 0;
      const p50 = percentile(r.rtts, 50);
      const p95 = percentile(r.rtts, 95);
      console.log(
        `${String(rate).padStart(8)} | ${achieved.toFixed(0).padStart(10)} | ${String(r.successful).padEnd(6)} | ${String(r.failed).padEnd(6)} | ${p50} / ${p95} / ${r.rtts[r.rtts.length - 1] ?? '?'}`.padEnd(
          80,
        ) + ` | ${((cpu * 1000) / Math.max(1, r.successful)).toFixed(2)}`,
      );
      if (r.failed > 0 || achieved < rate * 0.9) break;
      best = achieved;
      bestP95 = p95;
    }
    console.log(
      `highest rate with 0 failures: ${best.toFixed(0)} registrations/s (401→200 p95 ${bestP95} ms); target ≥ 500/s`,
    );
  } finally {
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
  await invites();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
