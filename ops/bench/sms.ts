/**
 * bench:sms (benchmarks-and-faults B9) — API `POST /SMS/Messages.json` → SMPP to a local SMSC sink
 * that answers submit_sm at once and sends a delivery receipt 1 s later. The server runs in its own
 * process (src/main.ts); the SMSC sink and the HTTP load generator (autocannon) run here.
 *
 *   npm run bench:sms [-- --duration 20 --connections 32 --window 50]
 *
 * Prints: API accepted/s and latency p50/p99 (autocannon), end-to-end messages/s (first request →
 * last submit_sm received by the SMSC), messages lost/duplicated at the SMSC, receipts matched
 * (messages that reached `delivered` in Postgres / messages accepted).
 * Targets: ≥ 500 msg/s end to end, p99 < 100 ms, 100 % receipts matched.
 */
import { once } from 'node:events';
import autocannon from 'autocannon';
import { openDb, sql } from '../../src/store/postgres/db.js';
import { createNamespace } from '../lib/namespace.js';
import { TestSmsc } from '../lib/smsc.js';
import { startServer } from './support.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const duration = arg('duration', 20);
const connections = arg('connections', 32);
const window = arg('window', 50);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const smsc = new TestSmsc();
  smsc.behaviour.accounts = { bench: 'pw' };
  smsc.behaviour.receiptDelayMs = 1000;
  const smscPort = await smsc.listen();
  const ns = await createNamespace('benchsms');
  const { child, base, admin } = await startServer(ns, null, {
    NUMBER_POOL: '+14155550100-+14155550199',
    SMPP_URL: `smpp://bench:pw@127.0.0.1:${smscPort}?window=${window}`,
  });
  const db = openDb(ns.databaseUrl, 2);
  try {
    const auth = `Basic ${Buffer.from(`${admin.sid}:${admin.auth_token}`).toString('base64')}`;
    const form = { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' };
    const bought = await fetch(`${base}/2012-04-24/Accounts/${admin.sid}/IncomingPhoneNumbers.json`, {
      method: 'POST',
      headers: form,
      body: 'PhoneNumber=%2B14155550100',
    });
    if (bought.status !== 201) throw new Error(`number: ${await bought.text()}`);
    while (smsc.binds === 0) await sleep(50);

    const url = `${base}/2012-04-24/Accounts/${admin.sid}/SMS/Messages.json`;
    const body = 'From=%2B14155550100&To=%2B15551230000&Body=Benchmark+message';
    // Warm-up (JIT, connection pools), not counted.
    await autocannon({ url, method: 'POST', headers: form, body, connections: 8, amount: 500 });
    await sleep(1500);
    const warm = smsc.submits().length;
    const commits = async () =>
      Number(
        (
          await db.query(
            sql`SELECT xact_commit::bigint AS n FROM pg_stat_database WHERE datname = current_database()`,
          )
        )[0]?.n ?? 0,
      );
    const commits0 = await commits();
    const t0 = Date.now();
    // The generator runs in a worker thread so the SMSC sink's event loop (receipts) does not delay it.
    const r = await autocannon({
      url,
      method: 'POST',
      headers: form,
      body,
      connections,
      duration,
      workers: 1,
    });
    const accepted = r['2xx'];
    const deadline = Date.now() + 30_000;
    while (smsc.submits().length - warm < accepted && Date.now() < deadline) await sleep(20);
    const submits = smsc.received.filter((x) => x.command === 'submit_sm').slice(warm);
    const lastSubmit = submits.reduce((m, x) => Math.max(m, x.at), t0);
    // Receipts come 1 s after each submit; wait for every accepted message to reach a final status.
    const count = async (status: string) =>
      Number(
        (await db.query(sql`SELECT count(*)::int AS n FROM sms_messages WHERE status = ${status}`))[0]?.n ??
          0,
      );
    // Every message the server accepted (autocannon does not count answers still in flight when it stops).
    const totalAccepted = Number(
      (await db.query(sql`SELECT count(*)::int AS n FROM sms_messages`))[0]?.n ?? 0,
    );
    while ((await count('delivered')) < totalAccepted && Date.now() < deadline + 10_000) await sleep(200);
    const delivered = await count('delivered');
    const allSubmits = smsc.submits().length;
    const statements = (await commits()) - commits0;
    // API accept (row created) → submit_sm_resp (date_sent), measured by the server itself.
    const lag = (
      await db.query(sql`
        SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50, percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) AS p99
        FROM (SELECT extract(epoch FROM date_sent - date_created) * 1000 AS ms FROM sms_messages
              WHERE date_created >= ${new Date(t0)}) x`)
    )[0] ?? { p50: 0, p99: 0 };
    const pending = (await count('queued')) + (await count('sending')) + (await count('sent'));
    const failed = (await count('failed')) + (await count('undelivered'));
    const e2e = accepted / ((lastSubmit - t0) / 1000);
    console.log(
      `bench:sms — node ${process.version}, server pid ${child.pid}, ${connections} connections, ${duration} s, window ${window}`,
    );
    console.log(
      `API: ${accepted} accepted (${r.non2xx} non-2xx, ${r.errors} errors), ${Math.round(r.requests.average)} req/s, ` +
        `latency p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, max ${r.latency.max} ms`,
    );
    console.log(
      `end to end: ${e2e.toFixed(0)} msg/s (first request → last submit_sm at the SMSC, ${((lastSubmit - t0) / 1000).toFixed(1)} s); ` +
        `submit_sm received ${allSubmits} for ${totalAccepted} messages in Postgres (lost ${Math.max(0, totalAccepted - allSubmits)}, ` +
        `extra ${Math.max(0, allSubmits - totalAccepted)}); max outstanding ${smsc.maxOutstanding}; ` +
        `accept → submit_sm_resp p50 ${Number(lag.p50).toFixed(1)} ms, p99 ${Number(lag.p99).toFixed(1)} ms`,
    );
    console.log(
      `receipts matched: ${delivered}/${totalAccepted} delivered (${((100 * delivered) / totalAccepted).toFixed(2)} %), ` +
        `${pending} pending, ${failed} failed (incl. 500 warm-up messages)`,
    );
    console.log(
      `Postgres: ${statements} transactions during the run and receipts (${(statements / Math.max(1, totalAccepted - 500)).toFixed(2)} per message)`,
    );
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
    await db.dispose();
    await smsc.close();
    await ns.dispose();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
