/** node-redis v5 client factory. Redis holds live actor snapshots, registrations, leases, counters. */
import { createClient, createCluster } from 'redis';
import { redactUrl } from '../../config.js';
import type { StoreMeter } from '../../metrics/port.js';

export type RedisStandalone = ReturnType<typeof createClient>;
export type RedisClusterClient = ReturnType<typeof createCluster>;
/** Either client kind: the stores use only commands both have, with keys that route to one slot. */
export type Redis = RedisStandalone | RedisClusterClient;

export class RedisUnavailableError extends Error {
  override readonly name = 'RedisUnavailableError';
  constructor(url: string, cause: unknown, hint = `start it with: ${redisStartHint(url)}`) {
    super(`cannot reach Redis at ${redactUrl(url)} (${(cause as Error)?.message ?? cause}); ${hint}`, {
      cause,
    });
  }
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

/**
 * The command that starts a Redis where `url` points: the hint must name the configured port and
 * host, or a user who follows it starts a server the process still cannot reach.
 */
export function redisStartHint(url: string): string {
  let host = '127.0.0.1';
  let port = '6379';
  try {
    const u = new URL(url);
    if (u.hostname) host = u.hostname;
    if (u.port) port = u.port;
  } catch {
    // An unparsable URL keeps the defaults; the message already shows the URL as given.
  }
  const bind = LOOPBACK.has(host) ? '127.0.0.1 -::1' : host.replace(/^\[|\]$/g, '');
  return `redis-server --daemonize yes --bind ${bind} --port ${port} --save "" --appendonly no`;
}

/**
 * Connects or throws RedisUnavailableError after the first failed attempt (no endless reconnect loop
 * at start-up); once connected, the client reconnects with capped backoff.
 */
export async function connectRedis(url: string, meter?: StoreMeter): Promise<RedisStandalone> {
  let connected = false;
  const client = createClient({
    url,
    socket: {
      connectTimeout: 5000,
      reconnectStrategy: (retries: number) => (connected ? Math.min(100 * 2 ** retries, 3000) : false),
    },
  });
  // Errors surface through the awaited commands; this listener keeps an 'error' event from crashing,
  // and counts it (the client emits one per lost connection and per failed reconnection attempt).
  client.on('error', () => meter?.connectionError('redis'));
  try {
    await client.connect();
    connected = true;
  } catch (e) {
    throw new RedisUnavailableError(url, e);
  }
  return client;
}

/**
 * Connects to a Redis Cluster through any of its nodes (`host:port`); the client learns the slot map
 * from them and follows MOVED/ASK redirections. Throws RedisUnavailableError when no root node answers.
 */
export async function connectRedisCluster(
  nodes: readonly string[],
  meter?: StoreMeter,
): Promise<RedisClusterClient> {
  const cluster = createCluster({
    rootNodes: nodes.map((n) => ({ url: `redis://${n}` })),
    defaults: { socket: { connectTimeout: 5000 } },
  });
  cluster.on('error', () => meter?.connectionError('redis'));
  try {
    await cluster.connect();
  } catch (e) {
    await cluster.destroy();
    throw new RedisUnavailableError(
      `redis://${nodes.join(',')}`,
      e,
      'check REDIS_CLUSTER_NODES names reachable nodes of a Redis Cluster whose state is ok (CLUSTER INFO)',
    );
  }
  return cluster;
}

/** REDIS_CLUSTER_NODES wins over REDIS_URL: the node then talks to a Redis Cluster. */
export function connectRedisStore(
  redis: { readonly url: string; readonly clusterNodes: readonly string[] },
  meter?: StoreMeter,
): Promise<Redis> {
  return redis.clusterNodes.length > 0
    ? connectRedisCluster(redis.clusterNodes, meter)
    : connectRedis(redis.url, meter);
}

export function isRedisCluster(redis: Redis): redis is RedisClusterClient {
  return 'masters' in redis;
}

/** Whether commands can go out now (the cluster client has no handshake flag of its own: open = ready). */
export function redisReady(redis: Redis): boolean {
  return isRedisCluster(redis) ? redis.isOpen : redis.isReady;
}

/**
 * A second connection for SUBSCRIBE (a subscribed connection cannot run other commands). A cluster
 * client keeps its subscriptions on connections of their own, so its duplicate serves the same way.
 */
export async function connectSubscriber(main: Redis): Promise<Redis> {
  const sub = main.duplicate();
  sub.on('error', () => {});
  await sub.connect();
  return sub;
}
