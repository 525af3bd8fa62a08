/** Call admission against real Redis: concurrency and CPS limits, FIFO queueing, abort, bounded queue. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallAdmission } from '../../../src/actors/call/admission.js';
import { AppError } from '../../../src/errors.js';
import { RedisCallAdmission } from '../../../src/store/redis/call-admission.js';
import { connectRedisStore, type Redis } from '../../../src/store/redis/client.js';
import { redisKeys } from '../../../src/store/redis/keys.js';
import { createNamespace, type TestNamespace } from '../../support/namespace.js';

let ns: TestNamespace;
let redis: Redis;
let store: RedisCallAdmission;

beforeAll(async () => {
  ns = await createNamespace('admission');
  // The namespace's Redis: the single one, or the cluster under `npm run test:redis-cluster`.
  redis = await connectRedisStore({
    url: ns.redisUrl,
    clusterNodes: ns.redisClusterNodes.split(',').filter(Boolean),
  });
  store = new RedisCallAdmission(redis, redisKeys(ns.redisPrefix));
});
afterAll(async () => {
  await redis?.quit();
  await ns?.dispose();
});

describe('RedisCallAdmission', () => {
  it('admits up to the concurrent limit and frees a slot on release', async () => {
    const limits = { maxConcurrent: 2, perSecond: 100 };
    expect(await store.tryAcquire('ACa', 'CA1', limits, 10_000)).toEqual({ admitted: true });
    expect(await store.tryAcquire('ACa', 'CA2', limits, 10_000)).toEqual({ admitted: true });
    const third = await store.tryAcquire('ACa', 'CA3', limits, 10_000);
    expect(third.admitted).toBe(false);
    expect(await store.liveCount('ACa')).toBe(2);
    await store.release('ACa', 'CA1');
    expect(await store.tryAcquire('ACa', 'CA3', limits, 10_000)).toEqual({ admitted: true });
    // Re-acquiring an admitted call is idempotent (no second slot).
    expect(await store.tryAcquire('ACa', 'CA3', limits, 10_000)).toEqual({ admitted: true });
    expect(await store.liveCount('ACa')).toBe(2);
  });

  it('expired leases free their slots', async () => {
    const limits = { maxConcurrent: 1, perSecond: 100 };
    expect((await store.tryAcquire('ACb', 'CA1', limits, 50)).admitted).toBe(true);
    expect((await store.tryAcquire('ACb', 'CA2', limits, 50)).admitted).toBe(false);
    await new Promise((r) => setTimeout(r, 80));
    expect((await store.tryAcquire('ACb', 'CA2', limits, 50)).admitted).toBe(true);
  });

  it('limits calls per second and says how long to wait', async () => {
    const limits = { maxConcurrent: 100, perSecond: 3 };
    // Align to the start of a second so all four land in the same one.
    await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 5));
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await store.tryAcquire('ACc', `CA${i}`, limits, 10_000));
    expect(results.filter((r) => r.admitted)).toHaveLength(3);
    const refused = results[3]!;
    expect(refused.admitted).toBe(false);
    if (!refused.admitted) expect(refused.retryAfterMs).toBeLessThanOrEqual(1000);
  });
});

describe('CallAdmission queue', () => {
  it('queues excess calls FIFO and starts them as slots free up', async () => {
    const adm = new CallAdmission(store, { maxConcurrent: 1, perSecond: 100, maxQueued: 10 });
    const order: string[] = [];
    const p1 = adm.admit('ACq', 'CA1').then(() => order.push('CA1'));
    const p2 = adm.admit('ACq', 'CA2').then(() => order.push('CA2'));
    const p3 = adm.admit('ACq', 'CA3').then(() => order.push('CA3'));
    await p1;
    await new Promise((r) => setTimeout(r, 300));
    expect(order).toEqual(['CA1']);
    expect(adm.queued('ACq')).toBe(2);
    await adm.release('ACq', 'CA1');
    await p2;
    expect(order).toEqual(['CA1', 'CA2']);
    await adm.release('ACq', 'CA2');
    await p3;
    expect(order).toEqual(['CA1', 'CA2', 'CA3']);
    await adm.release('ACq', 'CA3');
    adm.stop();
  });

  it('paces calls to the CPS limit', async () => {
    const adm = new CallAdmission(store, { maxConcurrent: 100, perSecond: 2, maxQueued: 10 });
    const started: number[] = [];
    const t0 = Date.now();
    await Promise.all(
      [1, 2, 3, 4, 5].map((i) => adm.admit('ACp', `CA${i}`).then(() => started.push(Date.now() - t0))),
    );
    // 5 calls at 2/s need at least two second boundaries.
    const seconds = new Set(started.map((ms) => Math.floor((t0 + ms) / 1000)));
    expect(seconds.size).toBeGreaterThanOrEqual(3);
    adm.stop();
  });

  it('removes an aborted call from the queue and refuses when the queue is full', async () => {
    const adm = new CallAdmission(store, { maxConcurrent: 1, perSecond: 100, maxQueued: 2 });
    await adm.admit('ACr', 'CA1');
    const ctl = new AbortController();
    const aborted = adm.admit('ACr', 'CA2', ctl.signal);
    const kept = adm.admit('ACr', 'CA3');
    await expect(adm.admit('ACr', 'CA4')).rejects.toBeInstanceOf(AppError);
    ctl.abort(new Error('canceled'));
    await expect(aborted).rejects.toThrow('canceled');
    await adm.release('ACr', 'CA1');
    await kept;
    expect(await store.liveCount('ACr')).toBe(1);
    adm.stop();
  });
});
