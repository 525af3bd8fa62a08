/**
 * The prerequisite check that runs before `npm test`: with a tool missing from PATH and installing
 * forbidden it stops within 10 s with one line naming the tool and the command that installs it —
 * both the script on its own and a whole `vitest run` (whose globalSetup calls it).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensurePrerequisites, PrerequisiteError, which } from '../../../../ops/lib/prerequisites.js';
import { TEST_TOOLS } from '../../../../ops/lib/tools.js';

const ROOT = resolve(import.meta.dirname, '../../../..');

/** A PATH holding every test tool that is installed here except `without`. */
async function pathWithout(without: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-path-'));
  for (const bin of [...TEST_TOOLS.map((t) => t.bin), 'node', 'sh']) {
    if (bin === without) continue;
    const found = which(bin, process.env.PATH);
    if (found) await symlink(found, join(dir, bin));
  }
  return dir;
}

function runNode(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stderr: string; ms: number }> {
  const started = Date.now();
  return new Promise((res) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    // Bounded: a hang is reported as a failure of the timing assertion, not a stuck suite.
    const timer = setTimeout(() => child.pid && process.kill(child.pid, 'SIGKILL'), 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      res({ code, stderr, ms: Date.now() - started });
    });
  });
}

describe('test prerequisites', () => {
  let noSipp: string;
  beforeAll(async () => {
    noSipp = await pathWithout('sipp');
  });
  afterAll(async () => {
    await rm(noSipp, { recursive: true, force: true });
  });

  it('the script stops at once with one line naming sipp and its install command', async () => {
    const r = await runNode(['--import', 'tsx', 'ops/lib/prerequisites.ts'], {
      ...process.env,
      PATH: noSipp,
      SWITCHBOARD_NO_INSTALL: '1',
    });
    expect(r.code).toBe(1);
    expect(r.ms).toBeLessThan(10_000);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/needs sipp\b/);
    expect(lines[0]).toContain('apt-get install -y --no-install-recommends sip-tester');
    expect(lines[0]).not.toMatch(/baresip|espeak/);
  });

  it('`vitest run` (the README test command) stops within 10 s with that line instead of hanging', async () => {
    const r = await runNode(['node_modules/vitest/vitest.mjs', 'run', 'test/unit/config.test.ts'], {
      ...process.env,
      PATH: noSipp,
      SWITCHBOARD_NO_INSTALL: '1',
    });
    expect(r.code).not.toBe(0);
    expect(r.ms).toBeLessThan(10_000);
    expect(r.stderr).toContain('apt-get install -y --no-install-recommends sip-tester');
  });

  it('a Redis that does not answer is named with the command that starts it', async () => {
    const err = await ensurePrerequisites({
      env: { ...process.env, SWITCHBOARD_NO_INSTALL: '1', TEST_REDIS_URL: 'redis://127.0.0.1:1' },
      log: () => {},
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PrerequisiteError);
    expect((err as Error).message).toMatch(
      /Redis is not answering on 127\.0\.0\.1:1; start it with: redis-server/,
    );
  });

  it('passes on this machine when every tool is present and the services answer', async () => {
    await expect(ensurePrerequisites({ env: process.env, log: () => {} })).resolves.toBeUndefined();
  });
});

describe('installing what is missing', () => {
  it('as root with apt-get, runs apt-get update then install with the missing packages, then re-checks', async () => {
    const dir = await pathWithout('sipp');
    const calls = join(dir, 'apt-calls.log');
    // A stand-in apt-get: records its arguments and "installs" sipp into this PATH directory.
    await writeFile(
      join(dir, 'apt-get'),
      `#!/bin/sh\necho "$DEBIAN_FRONTEND $*" >> ${calls}\ncase "$*" in *install*) printf '#!/bin/sh\\n' > ${dir}/sipp; /bin/chmod +x ${dir}/sipp;; esac\n`,
      { mode: 0o755 },
    );
    const log: string[] = [];
    try {
      await ensurePrerequisites({ env: { ...process.env, PATH: dir }, root: true, log: (l) => log.push(l) });
      expect(log).toEqual(['switchboard: installing sip-tester (missing sipp)']);
      expect((await readFile(calls, 'utf8')).trim().split('\n')).toEqual([
        'noninteractive update -qq',
        'noninteractive install -y -qq --no-install-recommends sip-tester',
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('not as root: names the command with sudo and installs nothing', async () => {
    const dir = await pathWithout('sipp');
    try {
      const err = await ensurePrerequisites({
        env: { ...process.env, PATH: dir },
        root: false,
        log: () => {},
      }).catch((e: unknown) => e);
      expect((err as Error).message).toMatch(
        /install with: sudo apt-get install -y --no-install-recommends sip-tester$/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
