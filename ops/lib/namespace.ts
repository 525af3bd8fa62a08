/**
 * Each integration test file (and each benchmark run) owns its namespace: a fresh Postgres database and a Redis key prefix,
 * both removed again by `dispose()`.
 */
import { randomBytes } from 'node:crypto';
import { dropDatabase, ensureDatabase, openDb, sql } from '../../src/store/postgres/db.js';
import { connectRedis } from '../../src/store/redis/client.js';
import { deleteClusterKeys } from './redis-cluster.js';

export const PG_BASE = process.env.TEST_DATABASE_URL ?? 'postgres://127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Set (host:port list) by `npm run test:redis-cluster`: servers then run against that Redis Cluster. */
export const REDIS_CLUSTER_NODES = process.env.TEST_REDIS_CLUSTER_NODES ?? '';

export interface TestNamespace {
  readonly databaseUrl: string;
  readonly redisUrl: string;
  readonly redisPrefix: string;
  /** REDIS_CLUSTER_NODES for servers in this namespace ('' for the single Redis). */
  readonly redisClusterNodes: string;
  dispose(): Promise<void>;
}

export async function createNamespace(label = 't'): Promise<TestNamespace> {
  const id = `${label
    .replace(/[^a-z0-9]/gi, '')
    .toLowerCase()
    .slice(0, 20)}_${randomBytes(5).toString('hex')}`;
  const url = new URL(PG_BASE);
  url.pathname = `/sbtest_${id}`;
  const databaseUrl = url.toString();
  await ensureDatabase(databaseUrl);
  const redisPrefix = `sbtest:${id}`;
  return {
    databaseUrl,
    redisUrl: REDIS_URL,
    redisPrefix,
    redisClusterNodes: REDIS_CLUSTER_NODES,
    async dispose() {
      await dropDatabase(databaseUrl);
      if (REDIS_CLUSTER_NODES) {
        await deleteClusterKeys(REDIS_CLUSTER_NODES.split(','), `${redisPrefix}:*`);
        return;
      }
      const redis = await connectRedis(REDIS_URL);
      try {
        for await (const keys of redis.scanIterator({ MATCH: `${redisPrefix}:*`, COUNT: 500 })) {
          if (keys.length) await redis.del(keys);
        }
      } finally {
        await redis.quit();
      }
    },
  };
}

/** Whether the database named by `url` exists (checked through the server's `postgres` database). */
export async function databaseExists(url: string): Promise<boolean> {
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const db = openDb(admin.toString(), 1);
  try {
    return (await db.query(sql`SELECT 1 FROM pg_database WHERE datname = ${name}`)).length > 0;
  } finally {
    await db.dispose();
  }
}
