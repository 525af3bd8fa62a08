/**
 * The server in its own process (tests that kill it or run the build, and the benchmarks), on a
 * namespace's database and Redis prefix; resolves once its API answers the Super Admin.
 */
import { type ChildProcess, type StdioOptions, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import type { TestNamespace } from './namespace.js';
import { freePort } from './ports.js';
import { spawned } from './tools.js';

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * How long a process may take to answer. Its start-up costs about 3 s of CPU under tsx (module
 * loading, its media engine's too), which takes many times longer on a machine loaded by parallel
 * test files: the bound is for a process that will never answer, not a guess at a slow one.
 */
const START_TIMEOUT_MS = 90_000;

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly httpPort: number;
  /** SIP port on `host`, or null when SIP is disabled. */
  readonly sipPort: number | null;
  /** `http://host:port` */
  readonly base: string;
  /** The Super Admin as the API shows it. */
  readonly admin: { readonly sid: string; readonly auth_token: string };
}

export async function startServerProcess(
  ns: Pick<TestNamespace, 'databaseUrl' | 'redisPrefix'>,
  opts: {
    /** `src` runs the sources under tsx, `dist` the build (`npm run build` must have run). */
    readonly entry: 'src' | 'dist';
    /**
     * The checkout to run (its `dist/` or `src/`); default this one. Another checkout's build lets a
     * benchmark measure an older commit against this one on the same machine.
     */
    readonly root?: string;
    readonly admin: { readonly email: string; readonly password: string };
    readonly host?: string;
    /** SIP port on `host`; null disables SIP; default: a free port. */
    readonly sipPort?: number | null;
    /** Node options before the entry (profilers, inspector). */
    readonly nodeArgs?: readonly string[];
    readonly env?: Readonly<Record<string, string>>;
    readonly stdio?: StdioOptions;
    /** How long to wait for the API to answer; default START_TIMEOUT_MS. */
    readonly startTimeoutMs?: number;
  },
): Promise<ServerProcess> {
  const host = opts.host ?? '127.0.0.1';
  const httpPort = await freePort(host);
  const sipPort = opts.sipPort === undefined ? await freePort(host) : opts.sipPort;
  const base = `http://${host}:${httpPort}`;
  const entry =
    opts.entry === 'dist' ? ['--enable-source-maps', 'dist/main.js'] : ['--import', 'tsx', 'src/main.ts'];
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), ...entry], {
    cwd: opts.root ?? ROOT,
    env: {
      ...process.env,
      LOG_LEVEL: 'silent',
      HTTP_HOST: host,
      HTTP_PORT: String(httpPort),
      ...(sipPort === null ? { SIP_ENABLED: 'false' } : { SIP_HOST: host, SIP_PORT: String(sipPort) }),
      DATABASE_URL: ns.databaseUrl,
      REDIS_PREFIX: ns.redisPrefix,
      ADMIN_EMAIL: opts.admin.email,
      ADMIN_PASSWORD: opts.admin.password,
      ...opts.env,
    },
    stdio: opts.stdio ?? ['ignore', 'ignore', 'inherit'],
  });
  await spawned(child, 'node');
  const auth = `Basic ${Buffer.from(`${opts.admin.email}:${opts.admin.password}`).toString('base64')}`;
  const deadline = Date.now() + (opts.startTimeoutMs ?? START_TIMEOUT_MS);
  while (child.exitCode === null && child.signalCode === null && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    try {
      const r = await fetch(`${base}/2012-04-24/Accounts/${encodeURIComponent(opts.admin.email)}.json`, {
        headers: { authorization: auth },
      });
      if (r.ok) return { child, httpPort, sipPort, base, admin: (await r.json()) as ServerProcess['admin'] };
    } catch {
      // not listening yet
    }
  }
  const exited = child.exitCode !== null || child.signalCode !== null;
  if (!exited && child.pid) process.kill(child.pid, 'SIGTERM');
  throw new Error(
    exited
      ? `server process did not start (exit ${child.exitCode ?? child.signalCode}; its stderr says why)`
      : `server process did not answer within ${opts.startTimeoutMs ?? START_TIMEOUT_MS} ms`,
  );
}
