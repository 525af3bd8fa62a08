/**
 * A local three-master Redis Cluster for tests: three `redis-server --cluster-enabled yes` on free
 * loopback ports (each also needs its bus port, port + 10000), joined by `redis-cli --cluster create`,
 * ready once every node reports `cluster_state:ok`. `stop()` kills the servers it started, by PID, and
 * removes their config directory.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { connectRedis, type RedisStandalone } from '../../src/store/redis/client.js';
import { freePort, isFree } from './ports.js';

const run = promisify(execFile);
const HOST = '127.0.0.1';

export interface LocalRedisCluster {
  /** `host:port` of each master, the form REDIS_CLUSTER_NODES takes. */
  readonly nodes: readonly string[];
  /** Deletes every key matching `pattern` on every master (SCAN sees one node's keys only). */
  deleteKeys(pattern: string): Promise<void>;
  /** How many keys match `pattern`, over every master. */
  countKeys(pattern: string): Promise<number>;
  stop(): Promise<void>;
}

/** A free port whose cluster bus port (port + 10000) is free too. */
async function clusterPort(taken: Set<number>): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const p = await freePort(HOST);
    if (p + 10000 <= 65535 && !taken.has(p) && (await isFree(HOST, p + 10000))) return p;
  }
  throw new Error('no free port pair for a Redis Cluster node');
}

async function info(port: number): Promise<string> {
  try {
    return (await run('redis-cli', ['-h', HOST, '-p', String(port), 'cluster', 'info'], { timeout: 2000 }))
      .stdout;
  } catch {
    return '';
  }
}

async function waitFor(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`local Redis Cluster: ${what} not reached within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Visits every key matching `pattern` on each node (`host:port`), with a connection to that node. */
async function eachClusterKey(
  nodes: readonly string[],
  pattern: string,
  visit: (redis: RedisStandalone, key: string) => Promise<unknown>,
): Promise<void> {
  for (const node of nodes) {
    const redis = await connectRedis(`redis://${node}`);
    try {
      for await (const keys of redis.scanIterator({ MATCH: pattern, COUNT: 500 })) {
        // One key a command: a node refuses a multi-key DEL whose keys span slots, even its own.
        for (const key of keys) await visit(redis, key);
      }
    } finally {
      await redis.quit();
    }
  }
}

/** Deletes every key matching `pattern` on every master (SCAN sees one node's keys only). */
export function deleteClusterKeys(nodes: readonly string[], pattern: string): Promise<void> {
  return eachClusterKey(nodes, pattern, (redis, key) => redis.del(key));
}

export async function startRedisCluster(): Promise<LocalRedisCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-redis-cluster-'));
  const children: ChildProcess[] = [];
  const failures: Error[] = [];
  const ports: number[] = [];
  const stop = async () => {
    const running = children.filter(
      (c) => c.exitCode === null && c.signalCode === null && c.pid !== undefined,
    );
    await Promise.all(
      running.map((child) => {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGKILL');
        return exited;
      }),
    );
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const taken = new Set<number>();
    for (let i = 0; i < 3; i++) {
      const port = await clusterPort(taken);
      taken.add(port);
      ports.push(port);
      const child = spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          HOST,
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          join(dir, `nodes-${port}.conf`),
          '--save',
          '',
          '--appendonly',
          'no',
          '--daemonize',
          'no',
          '--dir',
          dir,
        ],
        { stdio: 'ignore' },
      );
      child.on('error', (e) => failures.push(e));
      children.push(child);
    }
    await waitFor(
      async () => {
        if (failures.length) throw failures[0];
        return (await Promise.all(ports.map(info))).every((s) => s.includes('cluster_state:'));
      },
      10_000,
      'three nodes accepting connections',
    );
    await run(
      'redis-cli',
      [
        '--cluster',
        'create',
        ...ports.map((p) => `${HOST}:${p}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ],
      { timeout: 20_000 },
    );
    await waitFor(
      async () => (await Promise.all(ports.map(info))).every((s) => s.includes('cluster_state:ok')),
      20_000,
      'cluster_state:ok on every node',
    );
  } catch (e) {
    await stop();
    throw e;
  }
  const nodes = ports.map((p) => `${HOST}:${p}`);
  return {
    nodes,
    deleteKeys: (pattern) => deleteClusterKeys(nodes, pattern),
    async countKeys(pattern) {
      let n = 0;
      await eachClusterKey(nodes, pattern, async () => {
        n++;
      });
      return n;
    },
    stop,
  };
}
