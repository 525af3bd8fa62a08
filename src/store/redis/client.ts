/** node-redis v5 client factory. Redis holds live actor snapshots, registrations, leases, counters. */
import { createClient } from 'redis';
import { redactUrl } from '../../config.js';
import type { StoreMeter } from '../../metrics/port.js';

export type Redis = ReturnType<typeof createClient>;

export class RedisUnavailableError extends Error {
  override readonly name = 'RedisUnavailableError';
  constructor(url: string, cause: unknown) {
    super(
      `cannot reach Redis at ${redactUrl(url)} (${(cause as Error)?.message ?? cause}); start it with: ${redisStartHint(url)}`,
      { cause },
    );
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
export async function connectRedis(url: string, meter?: StoreMeter): Promise<Redis> {
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

/** A second connection for SUBSCRIBE (a subscribed connection cannot run other commands). */
export async function connectSubscriber(main: Redis): Promise<Redis> {
  const sub = main.duplicate();
  sub.on('error', () => {});
  await sub.connect();
  return sub;
}
