/**
 * bench:supervisor — the supervisor stream under call load; server in its own process (real Redis,
 * Postgres and media engine), markup server in this process, the stream clients in a child process
 * of their own (stream-clients.ts) so their parsing does not share this loop.
 * sipp drives inbound calls (`<Pause length="2"/><Hangup/>`) at `--rate` calls/s for `--duration` s
 * twice on the same server: first with no stream client, then with `--clients` clients connected.
 * Prints the achieved call rate and the server's CPU per call of both runs, the event lag of the
 * second (delta's event time → receipt by a client, every delta of every client) p50/p99/max and
 * the worst per delta type, deltas out of seq order (the fully parsing client), the clients
 * disconnected, and the server's RSS after a full GC before and after the run with clients.
 * Issue 16's target: 100 clients, 150 calls/s for 60 s, lag p99 < 100 ms, no disconnect, RSS flat,
 * the same call rate with and without clients (`-- --clients 100 --rate 150 --duration 60`).
 * The defaults are small so the bench runs in about two minutes on a shared machine.
 * Usage: npm run bench:supervisor [-- --clients 20 --rate 50 --duration 20]
 */
import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createNamespace } from '../lib/namespace.js';
import { freePort } from '../lib/ports.js';
import {
  collectedMemory,
  cpuSeconds,
  PEER_IP,
  ROOT,
  SERVER_DIR,
  SERVER_IP,
  sipp,
  startServer,
} from './support.js';

interface ClientsReport {
  readonly deltas: number;
  readonly frames: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly disconnected: number[];
  /** Lag by delta type, as the fully parsing client saw it. */
  readonly byType: Record<string, { n: number; p50: number; p99: number; max: number }>;
  readonly outOfOrder: number;
}

/** Forks the clients' process and waits until every client has its snapshot. */
async function startClients(base: string, sid: string, token: string, count: number): Promise<ChildProcess> {
  const child = fork(join(ROOT, 'ops/bench/stream-clients.ts'), [base, sid, token, String(count)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const failed = new Promise<never>((_, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`stream clients exited (${code})`)));
  });
  await Promise.race([once(child, 'message'), failed]);
  return child;
}

async function reportOf(child: ChildProcess): Promise<ClientsReport> {
  const answer = new Promise<ClientsReport>((resolve) =>
    child.on('message', (m: ClientsReport & { type?: string }) => {
      if (m.type === 'report') resolve(m);
    }),
  );
  child.send({ type: 'report' });
  return answer;
}

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  const v = i === -1 ? fallback : Number(process.argv[i + 1]);
  if (!(v > 0)) throw new Error(`--${name}: expected a positive number`);
  return v;
};
const CLIENTS = arg('clients', 20);
const RATE = arg('rate', 50);
const DURATION = arg('duration', 20);

async function markupServer() {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/xml' });
      res.end('<?xml version="1.0"?><Response><Pause length="2"/><Hangup/></Response>');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function main() {
  console.log(
    `bench:supervisor — node ${process.version}, server ${SERVER_DIR}; ${CLIENTS} clients, ${RATE} calls/s, ${DURATION} s`,
  );
  const ns = await createNamespace('benchsup');
  const sipPort = await freePort(SERVER_IP);
  const markup = await markupServer();
  const {
    child: server,
    base,
    admin,
    inspectPort,
  } = await startServer(
    ns,
    sipPort,
    { SIP_TCP: 'false', ACCOUNT_CPS: '10000', ACCOUNT_MAX_CONCURRENT_CALLS: '100000' },
    { inspect: true },
  );
  let clients: ChildProcess | undefined;
  try {
    const auth = `Basic ${Buffer.from(`${admin.sid}:${admin.auth_token}`).toString('base64')}`;
    const number = '+15558100001';
    const r = await fetch(`${base}/2012-04-24/Accounts/${admin.sid}/IncomingPhoneNumbers.json`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ PhoneNumber: number, VoiceUrl: `${markup.origin}/pause` }).toString(),
    });
    if (!r.ok) throw new Error(`number: ${r.status} ${await r.text()}`);
    const target = `${SERVER_IP}:${sipPort}`;
    const run = async (rate: number, seconds: number) => {
      const cpu0 = cpuSeconds(server.pid!);
      const res = await sipp(
        [
          target,
          ...['-i', PEER_IP, '-t', 'u1', '-timeout', `${seconds + 120}s`, '-max_recv_loops', '5000'],
          ...[
            '-p',
            String(await freePort(PEER_IP)),
            '-s',
            number,
            '-r',
            String(rate),
            '-m',
            String(rate * seconds),
          ],
        ],
        'uac-call-timed-expect-bye.xml',
      );
      // The last call's Pause lasts 2 s: not part of the offered rate's window.
      // Server CPU per call: what the stream costs the server, whatever else the machine runs.
      const cpuMs = ((cpuSeconds(server.pid!) - cpu0) * 1000) / Math.max(1, res.successful);
      return { ...res, rate: res.successful / Math.max(1, res.elapsed - 2), cpuMs };
    };
    await run(Math.min(RATE, 50), 2); // warm-up: JIT, pools
    await new Promise((r) => setTimeout(r, 2000));
    const without = await run(RATE, DURATION);
    await new Promise((r) => setTimeout(r, 3000));

    clients = await startClients(base, admin.sid, admin.auth_token, CLIENTS);
    const mem0 = await collectedMemory(inspectPort!);
    const withClients = await run(RATE, DURATION);
    await new Promise((r) => setTimeout(r, 3000));
    const mem1 = await collectedMemory(inspectPort!);
    const report = await reportOf(clients);
    const MiB = (b: number) => (b / 2 ** 20).toFixed(1);
    console.log(
      `without clients: ${without.successful} ok, ${without.failed} failed, achieved ${without.rate.toFixed(0)} calls/s, server CPU ${without.cpuMs.toFixed(2)} ms/call`,
    );
    console.log(
      `with ${CLIENTS} clients: ${withClients.successful} ok, ${withClients.failed} failed, achieved ` +
        `${withClients.rate.toFixed(0)} calls/s, server CPU ${withClients.cpuMs.toFixed(2)} ms/call`,
    );
    console.log(
      `event lag over ${report.deltas} deltas received (${report.frames} frames): p50 ${report.p50} ms, ` +
        `p99 ${report.p99} ms, max ${report.max} ms (target p99 < 100 ms); deltas out of seq order: ${report.outOfOrder}`,
    );
    // A delta's `at` is its cause's time (the INVITE, the BYE): when the server itself is behind,
    // a call's later deltas leave late whatever the stream does; the types tell the two apart.
    for (const [type, t] of Object.entries(report.byType))
      console.log(`  ${type} (one client, ${t.n}): p50 ${t.p50} ms, p99 ${t.p99} ms, max ${t.max} ms`);
    const disconnected = report.disconnected;
    console.log(
      `clients disconnected: ${disconnected.length}` +
        (disconnected.length ? ` (${disconnected.join(', ')})` : '') +
        `; server after a full GC: RSS ${MiB(mem0.rss)} → ${MiB(mem1.rss)} MiB, heap ${MiB(mem0.heapUsed)} → ${MiB(mem1.heapUsed)} MiB`,
    );
  } finally {
    clients?.kill('SIGTERM');
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
