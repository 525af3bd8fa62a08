/**
 * The demo's private Postgres and Redis: when nothing answers on the addresses it looks at first,
 * it initialises and starts its own instances in the data directory (as the `postgres` user when
 * run as root), says so, uses them, and stops them again; a second start reuses the data.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answers, demoStorage, postgresBinDir } from '../../../src/cli/demo/local-services.js';
import { openDb, sql } from '../../../src/store/postgres/db.js';
import { connectRedis } from '../../../src/store/redis/client.js';
import { freePort } from '../../support/sipp.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sb-demo-data-'));
  // The postgres user must be able to reach the data directory inside it.
  await chmod(dir, 0o755);
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('demo storage', () => {
  it('given URLs win and start nothing', async () => {
    const s = await demoStorage(
      { DATABASE_URL: 'postgres://127.0.0.1:5432/x', REDIS_URL: 'redis://127.0.0.1:6379' },
      {
        dataDir: dir,
        database: 'x',
        postgres: { host: '127.0.0.1', port: 1, privatePort: 1 },
        redis: { host: '127.0.0.1', port: 1, privatePort: 1 },
      },
    );
    expect(s).toMatchObject({
      databaseUrl: 'postgres://127.0.0.1:5432/x',
      redisUrl: 'redis://127.0.0.1:6379',
    });
    expect(s.notes).toEqual([]);
  });

  it('starts private instances under the data directory when nothing answers, and stops them', async () => {
    expect(postgresBinDir()).not.toBeNull();
    const pgPort = await freePort('127.0.0.1');
    const redisPort = await freePort('127.0.0.1');
    const options = {
      dataDir: dir,
      database: 'switchboard_demo',
      // Port 1: nothing answers there, as on a machine without a running Postgres/Redis.
      postgres: { host: '127.0.0.1', port: 1, privatePort: pgPort },
      redis: { host: '127.0.0.1', port: 1, privatePort: redisPort },
    };
    // Twice: the second start finds the data directory initialised and only starts the servers.
    for (let round = 0; round < 2; round++) {
      const s = await demoStorage({}, options);
      try {
        expect(s.databaseUrl).toBe(`postgres://postgres@127.0.0.1:${pgPort}/switchboard_demo`);
        expect(s.redisUrl).toBe(`redis://127.0.0.1:${redisPort}`);
        expect(s.notes).toEqual([
          `Postgres: nothing answers on 127.0.0.1:1; using a private instance in ${join(dir, 'postgres')} on port ${pgPort}`,
          `Redis: nothing answers on 127.0.0.1:1; using a private instance in ${join(dir, 'redis')} on port ${redisPort}`,
        ]);
        const admin = new URL(s.databaseUrl);
        admin.pathname = '/postgres';
        const db = openDb(admin.toString(), 1);
        try {
          const [row] = await db.query(sql`SELECT current_setting('data_directory') AS dir`);
          expect(row?.dir).toBe(join(dir, 'postgres'));
        } finally {
          await db.dispose();
        }
        const redis = await connectRedis(s.redisUrl);
        try {
          expect(await redis.ping()).toBe('PONG');
        } finally {
          await redis.quit();
        }
      } finally {
        await s.stop();
      }
      expect(await answers('127.0.0.1', pgPort)).toBe(false);
      expect(await answers('127.0.0.1', redisPort)).toBe(false);
    }
  }, 120_000);
});
