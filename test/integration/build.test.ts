/**
 * The production build (`npm run build`, what `npm start` runs): the compiled server starts with SIP
 * and its media engine (the compiled entry, no tsx), answers the API, serves the dashboard's files
 * from dist, and stops cleanly on SIGTERM.
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNamespace, type TestNamespace } from '../support/namespace.js';
import { startServerProcess } from '../support/server-process.js';

let ns: TestNamespace;

beforeAll(async () => {
  ns = await createNamespace('build');
  execFileSync('npm', ['run', 'build'], { stdio: ['ignore', 'ignore', 'inherit'] });
}, 120_000);
afterAll(() => ns.dispose());

describe('npm run build', () => {
  it('the compiled server starts its media engine from dist, serves the API and stops on SIGTERM', async () => {
    // Resolves once the API answers the Super Admin (200), else throws.
    const { child, admin, base } = await startServerProcess(ns, {
      entry: 'dist',
      admin: { email: 'build@example.test', password: 'build-password-1' },
    });
    try {
      expect(admin.sid).toMatch(/^AC/);
      // The engine is a child process running the compiled entry.
      const children = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8')
        .trim()
        .split(/\s+/);
      const commands = children.filter(Boolean).map((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
      expect(commands.some((c) => c.includes('dist/media/engine/entry.js') && !c.includes('tsx'))).toBe(true);
      // The dashboard's files are copied beside the compiled module that serves them.
      for (const path of ['/dashboard', '/dashboard/dashboard.js', '/dashboard/stream.js']) {
        const page = await fetch(`${base}${path}`);
        expect(page.status, path).toBe(200);
        expect((await page.text()).length, path).toBeGreaterThan(100);
      }
    } finally {
      child.kill('SIGTERM');
    }
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  }, 60_000);
});
