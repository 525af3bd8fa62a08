/**
 * Every Redis store against a single Redis and against a local three-master Redis Cluster (the
 * node's REDIS_CLUSTER_NODES client): admission limits, leases, registrar bindings and their count,
 * snapshots, conference room owners, the auth throttle, stream tickets, supervisor figures, the change bus, the stream relay
 * and node RPC. On the cluster a script whose keys spanned slots would fail with CROSSSLOT, so these
 * passing there shows the hash tags hold each multi-key operation in one slot.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeRpcTimeout } from '../../../src/store/node-rpc.js';
import { RedisAuthThrottle } from '../../../src/store/redis/auth-throttle.js';
import { RedisCallAdmission } from '../../../src/store/redis/call-admission.js';
import { RedisChangeBus } from '../../../src/store/redis/change-bus.js';
import {
  connectRedis,
  connectRedisStore,
  connectSubscriber,
  isRedisCluster,
  type Redis,
  redisReady,
} from '../../../src/store/redis/client.js';
import { RedisConferenceOwners } from '../../../src/store/redis/conference-owner.js';
import { REGISTRATION_SHARDS, type RedisKeys, redisKeys } from '../../../src/store/redis/keys.js';
import { RedisLeases } from '../../../src/store/redis/leases.js';
import { RedisNodeRpc } from '../../../src/store/redis/node-rpc.js';
import { RedisRegistrationStore } from '../../../src/store/redis/registration-store.js';
import { RedisSnapshotStore } from '../../../src/store/redis/snapshot-store.js';
import { RedisStreamRelay } from '../../../src/store/redis/stream-relay.js';
import { RedisStreamTickets } from '../../../src/store/redis/stream-tickets.js';
import { RedisSupervisorFigures } from '../../../src/store/redis/supervisor-figures.js';
import type { Binding } from '../../../src/store/registration-store.js';
import { REDIS_URL } from '../../support/namespace.js';
import { type LocalRedisCluster, startRedisCluster } from '../../support/redis-cluster.js';
import { API, startTestServer, type TestServer } from '../../support/server.js';
import { until } from '../../support/until.js';

let cluster: LocalRedisCluster;

beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

function binding(aor: string, contact: string, expiresAt: number): Binding {
  return {
    aor,
    contact,
    expiresAt,
    callId: `call-${contact}`,
    cseq: 1,
    accountSid: 'ACx',
    clientSid: 'CLx',
    flow: { protocol: 'UDP', address: '127.0.0.1', port: 5070, local: { address: '127.0.0.1', port: 5060 } },
    userAgent: null,
    registeredAt: Date.now(),
  };
}

describe.each([
  { backend: 'single Redis', cluster: false },
  { backend: 'Redis Cluster', cluster: true },
])('Redis stores on a $backend', ({ cluster: onCluster }) => {
  let redis: Redis;
  let sub: Redis;
  let keys: RedisKeys;
  let prefix: string;

  beforeAll(async () => {
    prefix = `sbtest:rcl_${randomBytes(5).toString('hex')}`;
    keys = redisKeys(prefix);
    redis = await connectRedisStore({ url: REDIS_URL, clusterNodes: onCluster ? cluster.nodes : [] });
    sub = await connectSubscriber(redis);
  });
  afterAll(async () => {
    await sub?.quit();
    await redis?.quit();
    if (onCluster) await cluster.deleteKeys(`${prefix}:*`);
    else {
      const plain = await connectRedis(REDIS_URL);
      for await (const found of plain.scanIterator({ MATCH: `${prefix}:*`, COUNT: 500 })) {
        if (found.length) await plain.del(found);
      }
      await plain.quit();
    }
  });

  it('connects with the client kind the configuration asks for', () => {
    expect(isRedisCluster(redis)).toBe(onCluster);
    expect(redisReady(redis)).toBe(true);
  });

  it('admits calls up to the concurrent and per-second limits of the account', async () => {
    const store = new RedisCallAdmission(redis, keys);
    const limits = { maxConcurrent: 2, perSecond: 100 };
    expect(await store.tryAcquire('ACa', 'CA1', limits, 10_000)).toEqual({ admitted: true });
    expect(await store.tryAcquire('ACa', 'CA2', limits, 10_000)).toEqual({ admitted: true });
    expect((await store.tryAcquire('ACa', 'CA3', limits, 10_000)).admitted).toBe(false);
    await store.renew('ACa', 'CA2', 10_000);
    await store.release('ACa', 'CA1');
    expect(await store.tryAcquire('ACa', 'CA3', limits, 10_000)).toEqual({ admitted: true });
    expect(await store.liveCount('ACa')).toBe(2);
    // Per second: aligned to a second's start so all four land in it.
    await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 5));
    const cps = { maxConcurrent: 100, perSecond: 3 };
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await store.tryAcquire('ACb', `CA${i}`, cps, 10_000));
    expect(results.map((r) => r.admitted)).toEqual([true, true, true, false]);
  });

  it('gives a lease to one holder at a time', async () => {
    const leases = new RedisLeases(redis, keys);
    expect(await leases.acquire('gw:GW1', 'node-a', 5_000)).toBe(true);
    expect(await leases.acquire('gw:GW1', 'node-b', 5_000)).toBe(false);
    await leases.release('gw:GW1', 'node-b');
    expect(await leases.acquire('gw:GW1', 'node-a', 5_000)).toBe(true);
    await leases.release('gw:GW1', 'node-a');
    expect(await leases.acquire('gw:GW1', 'node-b', 5_000)).toBe(true);
  });

  it('gives a conference room to one node, tells where a conference runs, marks its end once', async () => {
    const owners = new RedisConferenceOwners(redis, keys);
    const room = 'ACx:standup {weekly}';
    expect(await owners.ownerOf(room)).toBeNull();
    expect(await owners.claim(room, 'node-a', 5_000)).toBe('node-a');
    expect(await owners.claim(room, 'node-b', 5_000)).toBe('node-a');
    expect(await owners.claim(room, 'node-a', 5_000)).toBe('node-a');
    await owners.release(room, 'node-b');
    expect(await owners.ownerOf(room)).toBe('node-a');
    await owners.release(room, 'node-a');
    expect(await owners.claim(room, 'node-b', 200)).toBe('node-b');
    await until(
      () => owners.ownerOf(room),
      (o) => o === null,
      5_000,
    );
    await owners.locate('CF1', 'node-b', room, 5_000);
    expect(await owners.whereIs('CF1')).toEqual({ node: 'node-b', room });
    expect(await owners.whereIs('CF2')).toBeNull();
    expect(await owners.markEnded('CF1')).toBe(true);
    expect(await owners.markEnded('CF1')).toBe(false);
    await owners.forget('CF1');
  });

  it('lists the conferences whose location ran out, with their ending notes, until forgotten', async () => {
    const owners = new RedisConferenceOwners(redis, keys);
    const t0 = Date.now();
    await owners.locate('CFshort', 'node-a', 'ACx:a', 100);
    await owners.locate('CFlong', 'node-a', 'ACx:b', 60_000);
    const ending = {
      sid: 'CFshort',
      accountSid: 'ACx',
      friendlyName: 'a',
      statusCallback: { url: 'http://127.0.0.1:9/cb', method: 'POST', events: ['end'] },
      sequence: 4,
    };
    await owners.noteEnding(ending);
    expect(await owners.endingOf('CFshort')).toEqual(ending);
    expect(await owners.endingOf('CFlong')).toBeNull();
    expect(await owners.expired(t0, 10)).toEqual([]);
    const gone = await until(
      () => owners.expired(Date.now(), 10),
      (l) => l.length > 0,
      5_000,
    );
    expect(gone).toEqual(['CFshort']);
    // A renewal puts it back among the live ones.
    await owners.locate('CFshort', 'node-a', 'ACx:a', 60_000);
    expect(await owners.expired(Date.now(), 10)).toEqual([]);
    // Unlisted by a node that found it ended by another: the ender still reads the note.
    await owners.unlist('CFshort');
    expect(await owners.expired(Date.now() + 120_000, 100)).not.toContain('CFshort');
    expect(await owners.endingOf('CFshort')).toEqual(ending);
    await owners.forget('CFshort');
    await owners.forget('CFlong');
    expect(await owners.endingOf('CFshort')).toBeNull();
    const later = await owners.expired(Date.now() + 120_000, 100);
    expect(later.filter((sid) => sid === 'CFshort' || sid === 'CFlong')).toEqual([]);
  });

  it('keeps registrar bindings per AOR, bounded, and counts AORs across every index shard', async () => {
    const store = new RedisRegistrationStore(redis, keys);
    const later = Date.now() + 60_000;
    // Enough AORs that they spread over several shards (and, on the cluster, several masters).
    const aors = Array.from({ length: 3 * REGISTRATION_SHARDS }, (_, i) => `user${i}@example.test`);
    for (const aor of aors) {
      expect(await store.apply(aor, [binding(aor, `sip:${aor}`, later)], [], 2)).toHaveLength(1);
    }
    expect(await store.countRegistered()).toBe(aors.length);
    const aor = aors[0]!;
    const two = await store.apply(aor, [binding(aor, 'sip:second@127.0.0.1', later)], [], 2);
    expect(two?.map((b) => b.contact).sort()).toEqual([`sip:${aor}`, 'sip:second@127.0.0.1'].sort());
    expect(await store.apply(aor, [binding(aor, 'sip:third@127.0.0.1', later)], [], 2)).toBeNull();
    // A refresh keeps the first registration time; the other live binding comes back whole.
    const first = two?.find((b) => b.contact === `sip:${aor}`);
    const refresh = { ...binding(aor, `sip:${aor}`, later + 1_000), registeredAt: Date.now() + 5_000 };
    const refreshed = await store.apply(aor, [refresh], [], 2);
    expect(refreshed?.find((b) => b.contact === `sip:${aor}`)).toEqual({
      ...refresh,
      registeredAt: first?.registeredAt,
    });
    expect(refreshed?.find((b) => b.contact === 'sip:second@127.0.0.1')).toEqual(
      two?.find((b) => b.contact === 'sip:second@127.0.0.1'),
    );
    expect(await store.apply(aor, [], ['sip:second@127.0.0.1'], 2)).toHaveLength(1);
    expect((await store.list(aor)).map((b) => b.contact)).toEqual([`sip:${aor}`]);
    await store.clear(aor);
    expect(await store.list(aor)).toEqual([]);
    expect(await store.countRegistered()).toBe(aors.length - 1);
    const secret = await store.digestSecret();
    expect(await store.digestSecret()).toBe(secret);
  });

  it('refreshes bindings the earlier script wrote (cjson: its own key order, escaped slashes)', async () => {
    const store = new RedisRegistrationStore(redis, keys);
    const aor = 'legacy@example.test';
    const later = Date.now() + 60_000;
    const old = { ...binding(aor, 'sip:legacy@127.0.0.1', later), userAgent: 'UA/1.0 "x"' };
    const { registeredAt: first, expiresAt, userAgent, ...others } = old;
    // cjson escapes `/` (valid JSON) and keeps no key order.
    const stored = JSON.stringify({ registeredAt: first - 1, userAgent, expiresAt, ...others }).replaceAll(
      '/',
      '\\/',
    );
    expect(stored).toContain('\\/');
    expect(JSON.parse(stored)).toEqual({ ...old, registeredAt: first - 1 });
    await redis.hSet(keys.sipBindings(aor), old.contact, stored);
    const expired = binding(aor, 'sip:gone@127.0.0.1', Date.now() - 1);
    await redis.hSet(keys.sipBindings(aor), expired.contact, JSON.stringify(expired));
    // Keys in another order than the registrar's: registeredAt is still kept.
    const { registeredAt, ...rest } = binding(aor, old.contact, later + 1_000);
    const refresh = { registeredAt, ...rest };
    const live = await store.apply(aor, [refresh], [], 2);
    expect(live).toEqual([{ ...refresh, registeredAt: first - 1 }]);
    expect(await store.list(aor)).toEqual([{ ...refresh, registeredAt: first - 1 }]);
    await store.clear(aor);
  });

  it('saves, loads and deletes snapshots', async () => {
    const snapshots = new RedisSnapshotStore(redis, keys);
    await snapshots.save('call', 'CA1', { state: 'ringing' });
    await snapshots.save('sms', 'SM1', { state: 'queued' }, 60);
    expect(await snapshots.load('call', 'CA1')).toEqual({ state: 'ringing' });
    expect(await snapshots.load('sms', 'SM1')).toEqual({ state: 'queued' });
    await snapshots.delete('call', 'CA1');
    expect(await snapshots.load('call', 'CA1')).toBeNull();
  });

  it('throttles failed logins per identity and per source', async () => {
    const throttle = new RedisAuthThrottle(redis, keys);
    const limits = { identityFailures: 2, sourceFailures: 3, windowMs: 10_000 };
    const a = { identity: 'id-a', source: '192.0.2.1' };
    expect(await throttle.recordFailure(a, limits)).toEqual({ identityMs: 0, sourceMs: 0 });
    const second = await throttle.recordFailure(a, limits);
    expect(second.identityMs).toBeGreaterThan(0);
    expect(second.sourceMs).toBe(0);
    const other = await throttle.recordFailure({ identity: 'id-b', source: '192.0.2.1' }, limits);
    expect(other).toMatchObject({ identityMs: 0 });
    expect(other.sourceMs).toBeGreaterThan(0);
    await throttle.clearIdentity('id-a');
    expect((await throttle.blockedFor(a, limits)).identityMs).toBe(0);
  });

  it('redeems a stream ticket once and lists live supervisor figures', async () => {
    const tickets = new RedisStreamTickets(redis, keys);
    await tickets.issue('t1', 'ACsuper', 5_000);
    expect(await tickets.redeem('t1')).toBe('ACsuper');
    expect(await tickets.redeem('t1')).toBeNull();
    const figures = new RedisSupervisorFigures(redis, keys);
    await figures.publish({ instanceId: 'node-a', at: Date.now(), figures: { calls: 3 } }, 60_000);
    await figures.publish({ instanceId: 'node-b', at: Date.now() - 120_000, figures: { calls: 1 } }, 60_000);
    expect((await figures.list()).map((f) => f.instanceId)).toEqual(['node-a']);
  });

  it('delivers change notices and stream-relay messages to subscribers', async () => {
    const bus = new RedisChangeBus(redis, sub, keys.accountChannel);
    const changed: string[] = [];
    await bus.subscribe((sid) => changed.push(sid));
    const relay = new RedisStreamRelay(redis, sub, keys.supervisorStreamChannel);
    const relayed: string[] = [];
    await relay.subscribe((m) => relayed.push(m));
    await bus.publish('AC1');
    await relay.publish('{"delta":1}');
    expect(
      await until(
        () => changed,
        (c) => c.length > 0,
        5_000,
      ),
    ).toEqual(['AC1']);
    expect(
      await until(
        () => relayed,
        (r) => r.length > 0,
        5_000,
      ),
    ).toEqual(['{"delta":1}']);
  });

  it('tells when a subscription came back after a break (a cluster client cannot tell)', async () => {
    const own = await connectSubscriber(redis);
    try {
      const bus = new RedisChangeBus(redis, own, keys.clientChannel);
      if (isRedisCluster(own) || isRedisCluster(redis)) {
        expect(bus.watchGaps(() => {})).toBe(false);
        return;
      }
      const id = String(await own.sendCommand(['CLIENT', 'ID']));
      const changed: string[] = [];
      await bus.subscribe((sid) => changed.push(sid));
      let gaps = 0;
      expect(bus.watchGaps(() => gaps++)).toBe(true);
      await redis.sendCommand(['CLIENT', 'KILL', 'ID', id]);
      expect(
        await until(
          () => gaps,
          (n) => n > 0,
          10_000,
        ),
      ).toBe(1);
      // Told once the subscription is back: a notice published now arrives.
      await bus.publish('AC2');
      expect(
        await until(
          () => changed,
          (c) => c.length > 0,
          5_000,
        ),
      ).toEqual(['AC2']);
    } finally {
      await own.quit();
    }
  });

  it('answers node RPC, and a call to a node nobody serves fails', async () => {
    const serving = new RedisNodeRpc(redis, sub, keys, 'node-a');
    await serving.serve(async (body) => ({ echo: body }));
    const asking = new RedisNodeRpc(redis, sub, keys, 'node-b');
    expect(await asking.call('node-a', 'ping', 5_000)).toEqual({ echo: 'ping' });
    await expect(asking.call('node-gone', 'ping', 300)).rejects.toBeInstanceOf(NodeRpcTimeout);
    await asking.close();
    await serving.close();
  });
});

describe('a node with REDIS_CLUSTER_NODES', () => {
  let ts: TestServer;

  beforeAll(async () => {
    ts = await startTestServer({ label: 'rcluster', env: { REDIS_CLUSTER_NODES: cluster.nodes.join(',') } });
  }, 60_000);
  afterAll(async () => {
    await ts?.dispose();
    if (ts) await cluster.deleteKeys(`${ts.ns.redisPrefix}:*`);
  });

  it('runs on the cluster: ready, accounts change across the bus, failed logins are throttled', async () => {
    const ready = await fetch(`${ts.url}/ready`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { checks: Record<string, unknown> }).checks.redis).toEqual({
      status: 'up',
      required: true,
    });
    const created = await ts.request('POST', `${API}/Accounts.json`, {
      form: { EmailAddress: 'cluster@example.test', Password: 'password-123', Role: 'Developer' },
    });
    expect(created.status).toBe(201);
    const sid = created.json.sid as string;
    expect((await ts.request('GET', `${API}/Accounts/${sid}.json`)).json.email_address).toBe(
      'cluster@example.test',
    );
    const wrong = { user: sid, secret: 'not-the-token' };
    for (let i = 0; i < 3; i++) {
      expect((await ts.request('GET', `${API}/Accounts/${sid}.json`, { auth: wrong })).status).toBe(401);
    }
    // The throttle counted them in the cluster (its keys live on whichever masters own their slots).
    expect(await cluster.countKeys(`${ts.ns.redisPrefix}:auth:fail:*`)).toBeGreaterThan(0);
  });
});
