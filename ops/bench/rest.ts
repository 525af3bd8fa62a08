/**
 * bench:rest — REST read throughput with Basic auth, server in its own process, autocannon here.
 *   1. GET one account in JSON (target ≥ 3,000 req/s, p99 < 30 ms on 2 cores, generator included)
 *   2. GET the sub-account list in JSON
 * Uses wrk when installed (apt-get install wrk), else autocannon.
 * Usage: npm run bench:rest [-- --duration 10 --connections 50]
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import autocannon from 'autocannon';
import { createNamespace } from '../lib/namespace.js';
import { startServer } from './support.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const duration = arg('duration', 10);
const connections = arg('connections', 10);

async function freePort(): Promise<number> {
  const s = createServer().listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as { port: number }).port;
  s.close();
  return port;
}

function hasWrk(): boolean {
  return spawnSync('wrk', ['--version']).error === undefined;
}

/** Runs wrk (lighter than an in-process generator on 2 cores) and parses its --latency output. */
async function wrk(url: string, auth: string, seconds: number) {
  const out = spawnSync(
    'wrk',
    ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-H', `authorization: ${auth}`, url],
    { encoding: 'utf8' },
  ).stdout;
  const pick = (re: RegExp) => re.exec(out)?.[1] ?? '?';
  const non2xx = Number(
    pick(/Non-2xx or 3xx responses: (\d+)/) === '?' ? 0 : pick(/Non-2xx or 3xx responses: (\d+)/),
  );
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errs = socketErrors ? socketErrors.slice(1).reduce((a, b) => a + Number(b), 0) : 0;
  return {
    rps: Math.round(Number(pick(/Requests\/sec:\s+([\d.]+)/))),
    p50: pick(/\s50%\s+(\S+)/),
    p99: pick(/\s99%\s+(\S+)/),
    errors: non2xx + errs,
  };
}

async function main() {
  const ns = await createNamespace('benchrest');
  const { child, base, admin } = await startServer(ns, null);
  try {
    const tokenAuth = `Basic ${Buffer.from(`${admin.sid}:${admin.auth_token}`).toString('base64')}`;
    for (let i = 0; i < 20; i++) {
      await fetch(`${base}/2012-04-24/Accounts.json`, {
        method: 'POST',
        headers: { authorization: tokenAuth, 'content-type': 'application/x-www-form-urlencoded' },
        body: `EmailAddress=sub${i}%40example.test&Password=password-123&Role=Developer`,
      });
    }
    const run = async (title: string, path: string) => {
      if (hasWrk()) {
        await wrk(base + path, tokenAuth, 2);
        const r = await wrk(base + path, tokenAuth, duration);
        console.log(
          `${title}: ${r.rps} req/s, latency p50 ${r.p50}, p99 ${r.p99}, non-2xx/errors ${r.errors} ` +
            `(wrk, 1 thread, ${connections} connections, ${duration} s)`,
        );
        return;
      }
      await autocannon({ url: base + path, connections, duration: 2, headers: { authorization: tokenAuth } });
      const r = await autocannon({
        url: base + path,
        connections,
        duration,
        headers: { authorization: tokenAuth },
      });
      const non2xx = r.non2xx + r.errors;
      console.log(
        `${title}: ${Math.round(r.requests.average)} req/s, latency p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, ` +
          `max ${r.latency.max} ms, non-2xx/errors ${non2xx} (${connections} connections, ${duration} s)`,
      );
    };
    console.log(`bench:rest — server pid ${child.pid}, node ${process.version}`);
    if (hasWrk()) {
      // Calibration: a bare node:http JSON handler on the same machine, same load shape, so figures
      // can be compared across machines as ratios (shared/notes: 31.5 k req/s on the reference box).
      const calPort = await freePort();
      const cal = spawn(
        process.execPath,
        [
          '-e',
          `require('http').createServer((q,s)=>{s.setHeader('content-type','application/json');s.end('{"ok":true}')}).listen(${calPort},'127.0.0.1')`,
        ],
        { stdio: 'ignore' },
      );
      await new Promise((r) => setTimeout(r, 500));
      const c = await wrk(`http://127.0.0.1:${calPort}/`, 'x', Math.min(duration, 5));
      cal.kill();
      console.log(`calibration (bare node:http, same load shape): ${c.rps} req/s, p99 ${c.p99}`);
    }
    await run('GET account (JSON, Basic auth with AuthToken)', `/2012-04-24/Accounts/${admin.sid}.json`);
    await run('GET sub-account list (JSON, 20 items)', '/2012-04-24/Accounts.json');
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
