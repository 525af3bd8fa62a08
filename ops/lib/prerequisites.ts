/**
 * What `npm test` needs from the machine: the system tools of ops/lib/tools.ts on PATH, Postgres and
 * Redis answering. Run before the tests (vitest globalSetup, `.ci/run`): on a machine where it may
 * (root, apt-get present, SWITCHBOARD_NO_INSTALL unset) it installs missing Debian packages and
 * starts a local Postgres/Redis that is down; otherwise it stops at once with one line naming what
 * is missing and the command that fixes it. Never waits longer than a bounded probe.
 *
 *   node --import tsx ops/lib/prerequisites.ts     # exit 0, or 1 with the one line on stderr
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, mkdirSync, readdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { answers } from '../../src/cli/demo/local-services.js';
import { aptInstallCommand, type SystemTool, TEST_TOOLS } from './tools.js';

/** The one-line reason the prerequisites are not met; its message names the fix. */
export class PrerequisiteError extends Error {
  override readonly name = 'PrerequisiteError';
}

export interface PrerequisiteOptions {
  readonly env?: NodeJS.ProcessEnv;
  /** Progress lines (installing, starting); default stderr. */
  readonly log?: (line: string) => void;
  readonly tools?: readonly SystemTool[];
  /** Whether we run as root (may install and start services); default: the real uid is 0. */
  readonly root?: boolean;
}

/** Where `bin` is on `path` (an executable file), or null. */
export function which(bin: string, path: string | undefined): string | null {
  for (const dir of (path ?? '').split(delimiter)) {
    if (!dir) continue;
    const file = join(dir, bin);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return null;
}

/** Runs a command to completion with its output on stderr; resolves with its exit code (or -1). */
function run(cmd: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { env, stdio: ['ignore', process.stderr, process.stderr] });
    child.once('error', () => resolve(-1));
    child.once('close', (code) => resolve(code ?? -1));
  });
}

const isLoopback = (host: string): boolean => host === 'localhost' || /^127\./.test(host) || host === '::1';

interface Service {
  readonly name: 'Postgres' | 'Redis';
  readonly host: string;
  readonly port: number;
  /** argv that starts it, or null when it cannot be started from here. */
  readonly start: readonly string[] | null;
  /** The command a person runs, for the one line. */
  readonly fix: string;
}

function services(env: NodeJS.ProcessEnv): Service[] {
  const pg = new URL(env.TEST_DATABASE_URL ?? 'postgres://127.0.0.1:5432/postgres');
  const redis = new URL(env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');
  const pgPort = Number(pg.port || 5432);
  const redisPort = Number(redis.port || 6379);
  let cluster: string | null = null;
  try {
    cluster = readdirSync('/etc/postgresql').sort().at(-1) ?? null;
  } catch {
    cluster = null;
  }
  const pgStart = cluster ? ['pg_ctlcluster', '--skip-systemctl-redirect', cluster, 'main', 'start'] : null;
  const redisStart = [
    'redis-server',
    '--daemonize',
    'yes',
    '--bind',
    '127.0.0.1',
    '-::1',
    '--port',
    String(redisPort),
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    '/var/lib/redis',
    '--logfile',
    '/var/log/redis/switchboard-tests.log',
  ];
  return [
    {
      name: 'Postgres',
      host: pg.hostname,
      port: pgPort,
      start: isLoopback(pg.hostname) && pgStart && which('pg_ctlcluster', env.PATH) ? pgStart : null,
      fix: pgStart ? pgStart.join(' ') : 'apt-get install -y postgresql && pg_ctlcluster 15 main start',
    },
    {
      name: 'Redis',
      host: redis.hostname,
      port: redisPort,
      start: isLoopback(redis.hostname) && which('redis-server', env.PATH) ? redisStart : null,
      fix: which('redis-server', env.PATH)
        ? `redis-server --daemonize yes --port ${redisPort} --save '' --appendonly no`
        : 'apt-get install -y redis-server',
    },
  ];
}

/**
 * Makes the test prerequisites true where allowed, else throws `PrerequisiteError` with one line.
 * Allowed = running as root with apt-get on PATH and SWITCHBOARD_NO_INSTALL not set to 1.
 */
export async function ensurePrerequisites(o: PrerequisiteOptions = {}): Promise<void> {
  const env = o.env ?? process.env;
  const log = o.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const forbidden = env.SWITCHBOARD_NO_INSTALL === '1';
  const root = o.root ?? process.getuid?.() === 0;
  const apt = which('apt-get', env.PATH) !== null;
  const mayChange = !forbidden && root;

  let missing = (o.tools ?? TEST_TOOLS).filter((t) => which(t.bin, env.PATH) === null);
  if (missing.length > 0 && mayChange && apt) {
    const packages = [...new Set(missing.flatMap((t) => t.packages))];
    log(`switchboard: installing ${packages.join(' ')} (missing ${missing.map((t) => t.bin).join(', ')})`);
    const aptEnv = { ...env, DEBIAN_FRONTEND: 'noninteractive' };
    // A fresh image has no package lists yet; install fails without them.
    await run('apt-get', ['update', '-qq'], aptEnv);
    await run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages], aptEnv);
    missing = missing.filter((t) => which(t.bin, env.PATH) === null);
  }
  if (missing.length > 0) {
    const packages = [...new Set(missing.flatMap((t) => t.packages))];
    const sudo = root ? '' : 'sudo ';
    const off = forbidden ? ' (automatic install is off: SWITCHBOARD_NO_INSTALL=1)' : '';
    throw new PrerequisiteError(
      `switchboard: npm test needs ${missing.map((t) => t.bin).join(', ')}, not found on PATH${off}; install with: ${sudo}${aptInstallCommand(packages)}`,
    );
  }

  for (const s of services(env)) {
    if (await answers(s.host, s.port)) continue;
    if (mayChange && s.start) {
      log(
        `switchboard: ${s.name} is not answering on ${s.host}:${s.port}; starting it: ${s.start.join(' ')}`,
      );
      if (s.name === 'Redis') {
        mkdirSync('/var/lib/redis', { recursive: true });
        mkdirSync('/var/log/redis', { recursive: true });
      }
      const [cmd, ...args] = s.start;
      await run(cmd as string, args, env);
      for (let i = 0; i < 50 && !(await answers(s.host, s.port, 200)); i++)
        await new Promise((r) => setTimeout(r, 200));
      if (await answers(s.host, s.port)) continue;
    }
    throw new PrerequisiteError(
      `switchboard: ${s.name} is not answering on ${s.host}:${s.port}; start it with: ${s.fix}`,
    );
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  ensurePrerequisites().then(
    () => process.exit(0),
    (err: Error) => {
      process.stderr.write(`${err instanceof PrerequisiteError ? err.message : err.stack}\n`);
      process.exit(1);
    },
  );
}
