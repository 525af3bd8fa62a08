/** node-redis v5 client factory. Redis holds live actor snapshots, registrations, leases, counters. */
import { createClient } from 'redis';
import { redactUrl } from '../../config.js';

export type Redis = ReturnType<typeof createClient>;

export class RedisUnavailableError extends Error {
  override readonly name = 'RedisUnavailableError';
  constructor(url: string, cause: unknown) {
    super(
      `cannot reach Redis at ${redactUrl(url)} (${(cause as Error)?.message ?? cause}); start it with: ` +
        `redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no`,
      { cause },
    );
  }
}

/**
 * Connects or throws RedisUnavailableError after the first failed attempt (no endless reconnect loop
 * at start-up); once connected, the client reconnects with capped backoff.
 */
export async function connectRedis(url: string): Promise<Redis> {
  let connected = false;
  const client = createClient({
    url,
    socket: {
      connectTimeout: 5000,
      reconnectStrategy: (retries: number) => (connected ? Math.min(100 * 2 ** retries, 3000) : false),
    },
  });
  client.on('error', () => {
    // Errors surface through the awaited commands; this listener keeps an 'error' event from crashing.
  });
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
