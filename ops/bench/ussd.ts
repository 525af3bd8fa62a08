/**
 * bench:ussd — USSD pull sessions under sipp load, next to voice calls in the same run; server in
 * its own process (real Redis, Postgres), the markup server in this process.
 *   A. USSD pull (INVITE with a USSD body → 180, 200, ACK → markup `<UssdMessage>` → BYE carrying the
 *      message) offered at `--rate` sessions/s (default 100) for `--duration` s (default 20), after a
 *      warm-up: achieved sessions/s (sipp's successful calls / its elapsed time), failures,
 *      INVITE→200 p50/p95, and server CPU ms per session (utime + stime from /proc over the run).
 *   B. The peer: voice calls `<Pause length="2"/><Hangup/>` (bench:calls A) at the same rate and
 *      duration on the same server: server CPU ms per call (its media engine's CPU shown apart), and
 *      the ratio USSD / voice. Target: a USSD session costs no more server CPU than a voice call.
 * Usage: npm run bench:ussd [-- --rate 100 --duration 20]
 */
import { once } from 'node:events';
import { createNamespace } from '../lib/namespace.js';
import { freePort } from '../lib/ports.js';
import {
  benchApi,
  cpuWindow,
  markupServer,
  PEER_IP,
  percentile,
  SERVER_DIR,
  SERVER_IP,
  sipp,
  startServer,
} from './support.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  const v = i === -1 ? fallback : Number(process.argv[i + 1]);
  if (!(v > 0)) throw new Error(`--${name}: expected a positive number`);
  return v;
};
const RATE = arg('rate', 100);
const DURATION = arg('duration', 20);

const api = (port: number, path: string, form: Record<string, string> | null) =>
  benchApi(`http://${SERVER_IP}:${port}`, path, form);

async function main() {
  console.log(
    `bench:ussd — node ${process.version}, server ${SERVER_DIR}; ${RATE}/s for ${DURATION} s ` +
      '(2-core machine shared with other work: compare the ratio, measured in the same run)',
  );
  const ns = await createNamespace('benchussd');
  const sipPort = await freePort(SERVER_IP);
  const markup = await markupServer({
    '/ussd': '<UssdMessage>Your balance is 12.50 EUR. Thank you for using the service.</UssdMessage>',
    '/pause': '<Pause length="2"/><Hangup/>',
  });
  const { child: server, httpPort } = await startServer(ns, sipPort, {
    SIP_TCP: 'false',
    ACCOUNT_CPS: '10000',
    ACCOUNT_MAX_CONCURRENT_CALLS: '100000',
  });
  const pid = server.pid!;
  try {
    const me = await api(httpPort, '/Accounts/bench%40example.test.json', null);
    await api(httpPort, `/Accounts/${me.sid}/IncomingPhoneNumbers.json`, {
      PhoneNumber: '*100#',
      UssdUrl: `${markup.origin}/ussd`,
    });
    await api(httpPort, `/Accounts/${me.sid}/IncomingPhoneNumbers.json`, {
      PhoneNumber: '+15558000001',
      VoiceUrl: `${markup.origin}/pause`,
    });
    const target = `${SERVER_IP}:${sipPort}`;
    const base = ['-i', PEER_IP, '-t', 'u1', '-timeout', `${DURATION + 120}s`, '-max_recv_loops', '5000'];
    const run = async (service: string, scenario: string, rate: number, calls: number) =>
      sipp(
        [
          target,
          ...base,
          '-p',
          String(await freePort(PEER_IP)),
          '-s',
          service,
          '-r',
          String(rate),
          '-m',
          String(calls),
        ],
        scenario,
      );
    const measure = async (service: string, scenario: string, holdSeconds: number) => {
      await new Promise((r) => setTimeout(r, 2000));
      const stop = cpuWindow(pid);
      const res = await run(service, scenario, RATE, RATE * DURATION);
      // The last sessions' records are written just after their BYE.
      await new Promise((r) => setTimeout(r, 500));
      const cpu = stop();
      const per = (s: number) => (s * 1000) / Math.max(1, res.successful);
      return {
        res,
        server: per(cpu.server),
        media: per(cpu.media),
        rate: res.successful / Math.max(1, res.elapsed - holdSeconds),
      };
    };
    // Warm-up: the JIT and the connection pools, for both kinds.
    await run('*100%23', 'uac-ussd-expect-bye.xml', 50, 100);
    await run('+15558000001', 'uac-call-timed-expect-bye.xml', 50, 100);

    const u = await measure('*100%23', 'uac-ussd-expect-bye.xml', 0);
    console.log(
      `A. USSD pull *100# offered ${RATE}/s for ${DURATION} s: achieved ${u.rate.toFixed(0)}/s, ` +
        `${u.res.successful} ok, ${u.res.failed} failed (${u.res.retransmissions} sipp retransmissions); ` +
        `INVITE→200 p50 ${percentile(u.res.rtts, 50)} ms, p95 ${percentile(u.res.rtts, 95)} ms; ` +
        `server CPU ${u.server.toFixed(2)} ms per session`,
    );
    const v = await measure('+15558000001', 'uac-call-timed-expect-bye.xml', 2);
    console.log(
      `B. voice <Pause 2/><Hangup/> offered ${RATE}/s for ${DURATION} s: achieved ${v.rate.toFixed(0)}/s, ` +
        `${v.res.successful} ok, ${v.res.failed} failed; server CPU ${v.server.toFixed(2)} ms per call ` +
        `(media engine ${v.media.toFixed(2)} ms more)`,
    );
    console.log(
      `USSD / voice server CPU per session: ${(u.server / Math.max(1e-9, v.server)).toFixed(2)} ` +
        '(target ≤ 1: a USSD session costs no more than a voice call)',
    );
  } finally {
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
