/**
 * Private Postgres and Redis for the demo, used only when nothing answers on the default addresses
 * and the binaries are installed (Debian: /usr/lib/postgresql/<v>/bin, redis-server). Their data
 * lives under `.data/` and they listen on loopback on their own ports, so they never meet a system
 * instance. Postgres refuses to run as root: as root, initdb and the server run as the `postgres`
 * user (runuser), which must be able to reach the data directory.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { delimiter, join } from 'node:path';

/** Whether something accepts TCP connections on host:port within `ms`. */
export function answers(host: string, port: number, ms = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    const done = (ok: boolean): void => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(ms, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

async function waitFor(host: string, port: number, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await answers(host, port, 300)) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}

/** A service the demo started (or found running from an earlier demo) and how to stop it. */
export interface LocalService {
  readonly url: string;
  readonly dir: string;
  readonly port: number;
  /** False when an instance from an earlier run was already answering. */
  readonly started: boolean;
  stop(): Promise<void>;
}

/** The newest Debian Postgres bin directory with initdb, or null. */
export function postgresBinDir(root = '/usr/lib/postgresql'): string | null {
  let versions: string[];
  try {
    versions = readdirSync(root);
  } catch {
    return null;
  }
  const sorted = versions.filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
  for (const v of sorted) if (existsSync(join(root, v, 'bin', 'initdb'))) return join(root, v, 'bin');
  return null;
}

function runSync(argv: readonly string[]): { ok: boolean; output: string } {
  const [cmd, ...args] = argv;
  const r = spawnSync(cmd as string, args, { encoding: 'utf8', timeout: 120_000 });
  return { ok: r.status === 0, output: `${r.error?.message ?? ''}${r.stdout ?? ''}${r.stderr ?? ''}`.trim() };
}

/**
 * Starts (initialising it the first time) a private Postgres in `dir` on 127.0.0.1:`port` with
 * trust authentication for the `postgres` role. Throws with the command output when it cannot.
 */
export async function startPrivatePostgres(
  dir: string,
  port: number,
  database: string,
): Promise<LocalService> {
  const bin = postgresBinDir();
  if (!bin) throw new Error('Postgres is not installed (apt-get install -y postgresql)');
  const url = `postgres://postgres@127.0.0.1:${port}/${database}`;
  const root = process.getuid?.() === 0;
  const as = root ? ['runuser', '-u', 'postgres', '--'] : [];
  const noop = { url, dir, port, started: false, stop: async () => {} };
  if (await answers('127.0.0.1', port)) return noop;
  if (!existsSync(join(dir, 'PG_VERSION'))) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (root) {
      const chown = runSync(['chown', '-R', 'postgres:postgres', dir]);
      if (!chown.ok) throw new Error(`cannot hand ${dir} to the postgres user: ${chown.output}`);
      const reach = runSync([...as, 'test', '-w', dir]);
      if (!reach.ok)
        throw new Error(`the postgres user cannot reach ${dir} (a parent directory is private to root)`);
    }
    const init = runSync([
      ...as,
      join(bin, 'initdb'),
      '-D',
      dir,
      '-U',
      'postgres',
      '-A',
      'trust',
      '-E',
      'UTF8',
      '--no-instructions',
    ]);
    if (!init.ok) throw new Error(`initdb failed: ${init.output}`);
  }
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`;
  const start = runSync([
    ...as,
    join(bin, 'pg_ctl'),
    '-D',
    dir,
    '-l',
    join(dir, 'server.log'),
    '-o',
    options,
    '-w',
    '-t',
    '60',
    'start',
  ]);
  if (!start.ok || !(await waitFor('127.0.0.1', port, 10_000)))
    throw new Error(`private Postgres did not start: ${start.output} (log: ${join(dir, 'server.log')})`);
  return {
    ...noop,
    started: true,
    stop: async () => {
      runSync([...as, join(bin, 'pg_ctl'), '-D', dir, '-m', 'fast', '-w', 'stop']);
    },
  };
}

/** Starts a private redis-server (child of this process) with its files in `dir`. */
export async function startPrivateRedis(dir: string, port: number): Promise<LocalService> {
  const url = `redis://127.0.0.1:${port}`;
  if (await answers('127.0.0.1', port)) return { url, dir, port, started: false, stop: async () => {} };
  mkdirSync(dir, { recursive: true });
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    'no',
  ];
  const child: ChildProcess = spawn('redis-server', args, { stdio: 'ignore' });
  const failed = new Promise<Error>((resolve) => child.once('error', resolve));
  const ok = await Promise.race([waitFor('127.0.0.1', port, 10_000), failed.then(() => false)]);
  if (!ok) {
    if (child.exitCode === null && child.pid) process.kill(child.pid, 'SIGTERM');
    throw new Error(`private Redis did not start on port ${port}`);
  }
  return {
    url,
    dir,
    port,
    started: true,
    stop: async () => {
      if (child.exitCode !== null || !child.pid) return;
      const exited = new Promise((r) => child.once('exit', r));
      process.kill(child.pid, 'SIGTERM');
      await exited;
    },
  };
}

/** Whether an executable named `bin` is on PATH. */
export function onPath(bin: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => {
    if (!dir) return false;
    try {
      accessSync(join(dir, bin), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Where the demo looks for Postgres/Redis first, and where private instances go otherwise. */
export interface DemoStorageOptions {
  readonly dataDir: string;
  readonly database: string;
  readonly postgres: { readonly host: string; readonly port: number; readonly privatePort: number };
  readonly redis: { readonly host: string; readonly port: number; readonly privatePort: number };
}

/** What `demoStorage` decided: the URLs to use, lines to print, and what to stop on exit. */
export interface DemoStorage {
  readonly databaseUrl: string;
  readonly redisUrl: string;
  readonly notes: readonly string[];
  readonly stop: () => Promise<void>;
}

/**
 * DATABASE_URL / REDIS_URL from `env` win. Otherwise the default addresses are used when something
 * answers there, else a private instance under `dataDir` when the binaries are installed, else the
 * default address anyway (the server then stops with its one-line hint).
 */
export async function demoStorage(env: NodeJS.ProcessEnv, o: DemoStorageOptions): Promise<DemoStorage> {
  const notes: string[] = [];
  const started: LocalService[] = [];
  const stop = async (): Promise<void> => {
    for (const s of started.splice(0).reverse()) await s.stop().catch(() => {});
  };
  try {
    let databaseUrl = env.DATABASE_URL ?? `postgres://${o.postgres.host}:${o.postgres.port}/${o.database}`;
    if (!env.DATABASE_URL && !(await answers(o.postgres.host, o.postgres.port)) && postgresBinDir()) {
      const pg = await startPrivatePostgres(join(o.dataDir, 'postgres'), o.postgres.privatePort, o.database);
      if (pg.started) started.push(pg);
      databaseUrl = pg.url;
      notes.push(
        `Postgres: nothing answers on ${o.postgres.host}:${o.postgres.port}; ` +
          `using a private instance in ${pg.dir} on port ${pg.port}`,
      );
    }
    let redisUrl = env.REDIS_URL ?? `redis://${o.redis.host}:${o.redis.port}`;
    if (!env.REDIS_URL && !(await answers(o.redis.host, o.redis.port)) && onPath('redis-server')) {
      const redis = await startPrivateRedis(join(o.dataDir, 'redis'), o.redis.privatePort);
      if (redis.started) started.push(redis);
      redisUrl = redis.url;
      notes.push(
        `Redis: nothing answers on ${o.redis.host}:${o.redis.port}; ` +
          `using a private instance in ${redis.dir} on port ${redis.port}`,
      );
    }
    return { databaseUrl, redisUrl, notes, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
