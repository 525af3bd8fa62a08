/** The process refuses to start with one clear line when a dependency or a setting is wrong. */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createNamespace, databaseExists } from '../support/namespace.js';

function runMain(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { ...process.env, LOG_LEVEL: 'silent', HTTP_PORT: '0', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

/** A loopback TCP port nothing listens on: bound once by the OS, then released. */
function unusedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

describe('start-up failures', () => {
  it('Postgres unreachable: exits non-zero with one line naming the URL and how to start it', async () => {
    const r = await runMain({ DATABASE_URL: 'postgres://user:secret@127.0.0.1:1/switchboard' });
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/cannot reach Postgres at postgres:\/\/user:\*\*\*@127\.0\.0\.1:1\/switchboard/);
    expect(lines[0]).toMatch(/pg_ctlcluster/);
    expect(r.stderr).not.toContain('secret');
  });

  it('Redis unreachable: exits non-zero with one line naming the URL and how to start it', async () => {
    // The process creates its database before it reaches Redis: the namespace drops it again.
    const ns = await createNamespace('startup');
    try {
      const r = await runMain({ DATABASE_URL: ns.databaseUrl, REDIS_URL: 'redis://127.0.0.1:1' });
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/cannot reach Redis at redis:\/\/127\.0\.0\.1:1.*redis-server/);
    } finally {
      await ns.dispose();
    }
    expect(await databaseExists(ns.databaseUrl)).toBe(false);
  });

  it('Redis unreachable on another port: the start command names that port', async () => {
    const ns = await createNamespace('startup');
    try {
      const port = await unusedPort();
      const r = await runMain({ DATABASE_URL: ns.databaseUrl, REDIS_URL: `redis://127.0.0.1:${port}` });
      expect(r.code).toBe(1);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`cannot reach Redis at redis://127.0.0.1:${port}`);
      expect(lines[0]).toMatch(new RegExp(`redis-server .*--port ${port} `));
      expect(lines[0]).not.toContain('--port 6379');
    } finally {
      await ns.dispose();
    }
    expect(await databaseExists(ns.databaseUrl)).toBe(false);
  });

  it('a bad setting: exits 2 naming the variable', async () => {
    const r = await runMain({ HTTP_PORT: 'eighty' });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/configuration error: HTTP_PORT/);
  });
});
