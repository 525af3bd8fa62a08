/**
 * bench:auth — valid requests while 100 clients guess passwords. Server in its own process (the
 * build; BENCH_TSX=1 for the sources), autocannon here.
 *   1. unloaded: GET one account in JSON with valid Basic credentials (sid + AuthToken)
 *   2. loaded: the same, while `--attackers` connections send wrong passwords for the same account
 *      (`--attack-rate` requests per second each; default 0 = each sends its next guess as soon as
 *      the last one is answered, ignoring Retry-After)
 * Prints valid p99 and throughput against the unloaded run, and the share of wrong ones answered
 * 429. Targets: valid p99 < 50 ms and >= 70 % of unloaded throughput.
 * Usage: npm run bench:auth [-- --duration 10 --connections 10 --attackers 100 --attack-rate 0]
 */
import { once } from 'node:events';
import autocannon from 'autocannon';
import { createNamespace } from '../lib/namespace.js';
import { ADMIN, startServer } from './support.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const duration = arg('duration', 10);
const connections = arg('connections', 10);
const attackers = arg('attackers', 100);
const attackRate = arg('attack-rate', 0);

const basic = (user: string, secret: string) =>
  `Basic ${Buffer.from(`${user}:${secret}`).toString('base64')}`;

async function main() {
  const ns = await createNamespace('benchauth');
  const { child, base, admin } = await startServer(ns, null);
  try {
    const url = `${base}/2012-04-24/Accounts/${admin.sid}.json`;
    const valid = { url, connections, headers: { authorization: basic(admin.sid, admin.auth_token) } };
    console.log(
      `bench:auth — server pid ${child.pid}, node ${process.version}; valid: ${connections} connections, ` +
        `${duration} s; attackers: ${attackers} connections, ${attackRate || 'unlimited'} req/s each`,
    );
    await autocannon({ ...valid, duration: 2 }); // warm-up
    const unloaded = await autocannon({ ...valid, duration });

    // Each attacker guesses a different wrong password for the same account (its email).
    let n = 0;
    const attack = autocannon({
      url,
      connections: attackers,
      duration: duration + 4,
      ...(attackRate > 0 ? { connectionRate: attackRate } : {}),
      requests: [
        {
          setupRequest: (req) => ({
            ...req,
            headers: { ...req.headers, authorization: basic(ADMIN.email, `wrong-${++n}`) },
          }),
        },
      ],
    });
    await new Promise((r) => setTimeout(r, 2000)); // let the throttle engage, as it would in life
    const loaded = await autocannon({ ...valid, duration });
    const wrong = await attack;

    const codes =
      (wrong as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {};
    const total = Object.values(codes).reduce((a, c) => a + c.count, 0);
    const share = (code: string) => (total ? ((codes[code]?.count ?? 0) / total) * 100 : 0);
    const ratio = (loaded.requests.average / unloaded.requests.average) * 100;
    const line = (title: string, r: autocannon.Result) =>
      `${title}: ${Math.round(r.requests.average)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, ` +
      `max ${r.latency.max} ms, non-2xx/errors ${r.non2xx + r.errors}`;
    console.log(line('valid, unloaded', unloaded));
    console.log(line('valid, under attack', loaded));
    console.log(
      `wrong passwords: ${total} answered (${Math.round(total / (duration + 4))} req/s): ` +
        Object.entries(codes)
          .map(([code, c]) => `${code} × ${c.count}`)
          .join(', ') +
        ` → ${share('429').toFixed(1)} % were 429`,
    );
    const p99ok = loaded.latency.p99 < 50;
    const tputOk = ratio >= 70;
    console.log(
      `valid p99 under attack ${loaded.latency.p99} ms (target < 50: ${p99ok ? 'met' : 'MISSED'}); ` +
        `throughput ${ratio.toFixed(0)} % of unloaded (target >= 70 %: ${tputOk ? 'met' : 'MISSED'})`,
    );
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
    await ns.dispose();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
