/**
 * The production build (`npm run build`, what `npm start` runs): the compiled server starts with SIP
 * and its media engine (the compiled entry, no tsx), answers the API, and stops cleanly on SIGTERM.
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNamespace, type TestNamespace } from '../support/namespace.js';
import { freePort } from '../support/sipp.js';
import { until } from '../support/until.js';

const HOST = '127.0.0.1';
let ns: TestNamespace;

beforeAll(async () => {
  ns = await createNamespace('build');
  execFileSync('npm', ['run', 'build'], { stdio: ['ignore', 'ignore', 'inherit'] });
}, 120_000);
afterAll(() => ns.dispose());

describe('npm run build', () => {
  it('the compiled server starts its media engine from dist, serves the API and stops on SIGTERM', async () => {
    const httpPort = await freePort(HOST);
    const sipPort = await freePort(HOST);
    const child = spawn(process.execPath, ['dist/main.js'], {
      env: {
        ...process.env,
        LOG_LEVEL: 'silent',
        HTTP_HOST: HOST,
        HTTP_PORT: String(httpPort),
        SIP_HOST: HOST,
        SIP_PORT: String(sipPort),
        DATABASE_URL: ns.databaseUrl,
        REDIS_PREFIX: ns.redisPrefix,
        ADMIN_EMAIL: 'build@example.test',
        ADMIN_PASSWORD: 'build-password-1',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    try {
      const auth = `Basic ${Buffer.from('build@example.test:build-password-1').toString('base64')}`;
      const status = await until(
        async () => {
          try {
            const r = await fetch(
              `http://${HOST}:${httpPort}/2012-04-24/Accounts/build%40example.test.json`,
              {
                headers: { authorization: auth },
              },
            );
            return r.status;
          } catch {
            return 0; // not listening yet
          }
        },
        (s) => s === 200,
        30_000,
      );
      expect(status).toBe(200);
      // The engine is a child process running the compiled entry.
      const children = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8')
        .trim()
        .split(/\s+/);
      const commands = children.filter(Boolean).map((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
      expect(commands.some((c) => c.includes('dist/media/engine/entry.js') && !c.includes('tsx'))).toBe(true);
    } finally {
      child.kill('SIGTERM');
    }
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  }, 60_000);
});
