/**
 * The live stream on demand over a real Redis relay (two nodes, as server.ts wires them): with no
 * subscriber anywhere a node publishes nothing of its calls; a client connecting on the other node
 * makes it send its live calls (shown there as `call.created`) and then its deltas.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initialContext } from '../../src/actors/call/call.setup.js';
import type { CallContext } from '../../src/actors/call/call.types.js';
import { LiveStream } from '../../src/actors/supervision/live-stream.js';
import { connectRedis, connectSubscriber, type Redis } from '../../src/store/redis/client.js';
import { redisKeys } from '../../src/store/redis/keys.js';
import { RedisStreamRelay } from '../../src/store/redis/stream-relay.js';
import { REDIS_URL } from '../support/namespace.js';
import { until } from '../support/until.js';

let redis: Redis;
let sub: Redis;
let spy: Redis;
const channel = redisKeys(`demand-${randomBytes(4).toString('hex')}`).supervisorStreamChannel;
/** Every message the channel carried. */
const carried: string[] = [];

beforeAll(async () => {
  redis = await connectRedis(REDIS_URL);
  sub = await connectSubscriber(redis);
  spy = await connectSubscriber(redis);
  await spy.subscribe(channel, (m) => carried.push(m));
});
afterAll(async () => {
  for (const c of [spy, sub, redis]) await c?.close();
});

async function node(id: string): Promise<LiveStream> {
  const relay = new RedisStreamRelay(redis, sub, channel);
  const stream = new LiveStream({
    node: id,
    metrics: () => ({}),
    relay: (m) => void relay.publish(m).catch(() => {}),
    onDemand: {},
    flushMs: 1,
  });
  await relay.subscribe((m) => stream.applyRemote(m));
  return stream;
}

const call = (sid: string): CallContext =>
  initialContext({
    sid,
    accountSid: 'AC00000000000000000000000000000001',
    direction: 'inbound',
    from: '+15550001111',
    to: '+15550002222',
    apiVersion: '2010-04-01',
    createdAt: Date.now(),
  });

describe('supervisor stream on demand over Redis', () => {
  it('publishes nothing of its calls unwatched, and catches a new watcher up', async () => {
    const a = await node('ID-A');
    const b = await node('ID-B');
    try {
      const first = call('CA1');
      a.observe({ type: 'call.created', call: first, at: Date.now() });
      a.observe({ type: 'call.answered', call: { ...first, answeredAt: Date.now() }, at: Date.now() });
      a.flush();
      // The hellos arrive; no delta does.
      await until(
        () => carried.length,
        (n) => n >= 2,
      );
      await new Promise((r) => setTimeout(r, 100));
      expect(carried.some((m) => m.includes('"deltas"'))).toBe(false);
      expect(a.lastSeq).toBe(0);

      const seen: string[] = [];
      b.subscribe(undefined, (f) => seen.push(f));
      const second = call('CA2');
      await until(
        () => a.publishing,
        (p) => p,
      );
      a.observe({ type: 'call.created', call: second, at: Date.now() });
      const frames = await until(
        () => seen.flatMap((f) => JSON.parse(f) as { type: string; call: { sid: string; status: string } }[]),
        (f) => f.length >= 2,
      );
      expect(frames.map((f) => [f.type, f.call.sid, f.call.status])).toEqual([
        ['call.created', 'CA1', 'in-progress'],
        ['call.created', 'CA2', 'ringing'],
      ]);
    } finally {
      a.close();
      b.close();
    }
  });
});
