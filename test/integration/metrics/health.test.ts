/**
 * `GET /health` and `GET /ready` on a real server whose Redis is a redis-server this test starts on a
 * free port: both answer without credentials (and even with wrong ones); `/ready` lists each
 * dependency and is 200 while all are up, 503 naming Redis once that server is killed, and 200 again
 * after Redis comes back on the same port (the client reconnects); the lost connection is counted in
 * `switchboard_store_errors_total`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createConnection } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReadinessReport } from '../../../src/metrics/readiness.js';
import { parsePrometheusText, sampleValue } from '../../support/prometheus-text.js';
import { startTestServer, type TestServer } from '../../support/server.js';
import { freePort } from '../../support/sipp.js';
import { until } from '../../support/until.js';

let redisPort: number;
let redis: ChildProcess | null = null;
let ts: TestServer;

/** Starts redis-server in the foreground (so we own its PID) and waits until it accepts connections. */
async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const accepting = () =>
    new Promise<boolean>((resolve) => {
      const s = createConnection({ host: '127.0.0.1', port }, () => {
        s.end();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
  expect(await until(accepting, (ok) => ok, 5_000)).toBe(true);
  return child;
}

async function stopRedis(): Promise<void> {
  const child = redis;
  redis = null;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

async function get(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${ts.url}${path}`, { headers });
  return { status: res.status, headers: res.headers, json: (await res.json()) as ReadinessReport };
}

beforeAll(async () => {
  redisPort = await freePort('127.0.0.1');
  redis = await startRedis(redisPort);
  ts = await startTestServer({ label: 'health', env: { REDIS_URL: `redis://127.0.0.1:${redisPort}` } });
});
afterAll(async () => {
  // Redis back first, so the server's shutdown (QUIT) does not wait on a reconnecting client.
  if (!redis && redisPort) redis = await startRedis(redisPort).catch(() => null);
  await ts?.dispose();
  await stopRedis();
});

describe('/health and /ready', () => {
  it('/health answers 200 {"status":"ok"} without credentials, and ignores wrong ones', async () => {
    const r = await get('/health');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ status: 'ok' });
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect((await get('/health', { authorization: 'Basic d3Jvbmc6d3Jvbmc=' })).status).toBe(200);
  });

  it('/ready answers 200 with every dependency up', async () => {
    const r = await get('/ready');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      status: 'ready',
      checks: {
        postgres: { status: 'up', required: true },
        redis: { status: 'up', required: true },
        sip: { status: 'up', required: true },
        media: { status: 'up', required: true },
        // Not draining (SIGTERM turns it down: README, "Stopping a node").
        accepting: { status: 'up', required: true, parts: { state: 'accepting' } },
      },
    });
  });

  it('/ready turns 503 naming Redis when Redis stops, and 200 when it is back', async () => {
    await stopRedis();
    const down = await until(
      () => get('/ready'),
      (r) => r.status === 503,
    );
    expect(down.status).toBe(503);
    expect(down.json.status).toBe('not_ready');
    expect(down.json.checks.redis).toEqual({ status: 'down', required: true });
    expect(down.json.checks.postgres?.status).toBe('up');
    // Liveness does not depend on Redis; the lost connection is counted.
    expect((await get('/health')).status).toBe(200);
    const scraped = await (await fetch(`${ts.url}/metrics`)).text();
    const errors = sampleValue(parsePrometheusText(scraped), 'switchboard_store_errors_total', {
      store: 'redis',
    });
    expect(errors).toBeGreaterThanOrEqual(1);

    redis = await startRedis(redisPort);
    const back = await until(
      () => get('/ready'),
      (r) => r.status === 200,
    );
    expect(back.status).toBe(200);
    expect(back.json.checks.redis?.status).toBe('up');
  });

  it('/metrics is open when METRICS_TOKEN is not set', async () => {
    const res = await fetch(`${ts.url}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('switchboard_calls_active');
  });
});
