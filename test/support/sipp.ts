/**
 * Runs sipp (Debian sip-tester) as a real SIP peer. Peers bind 127.0.0.2+ so they never share the
 * service's address (a `sip` package pitfall), on a free port, and stop by themselves (-m, -timeout).
 * Scenarios live in test/fixtures/sipp, one per behaviour.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../../ops/lib/ports.js';
import { spawned } from '../../ops/lib/tools.js';

export { freePort, isFree } from '../../ops/lib/ports.js';

export const SIPP_DIR = resolve(import.meta.dirname, '../fixtures/sipp');

export interface SippOptions {
  /** Scenario file name in test/fixtures/sipp, or a built-in (`-sn uas`) when prefixed with `sn:`. */
  readonly scenario: string;
  /** host:port of the remote side (omit for a UAS that only waits). */
  readonly remote?: string;
  readonly service?: string;
  readonly transport?: 'u1' | 't1' | 'un';
  readonly localIp?: string;
  readonly localPort?: number;
  readonly auth?: { readonly user: string; readonly password: string };
  readonly keys?: Readonly<Record<string, string>>;
  readonly calls?: number;
  readonly rate?: number;
  readonly timeoutSeconds?: number;
  readonly extra?: readonly string[];
}

export interface SippResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /**
   * sipp's error trace (unexpected messages, timeouts), without its watchdog's "Overload warning"
   * lines: those say sipp itself was scheduled late on a busy machine, not that a peer misbehaved.
   */
  readonly errors: string;
  /** The screen/stat summary lines when -trace_stat is used. */
  readonly localPort: number;
}

export interface SippProcess {
  readonly localPort: number;
  readonly done: Promise<SippResult>;
  /** Ends the process we started (by its PID). */
  kill(): void;
}

/** Starts sipp and returns at once (for UAS peers that must be up before the call is placed). */
export async function startSipp(o: SippOptions): Promise<SippProcess> {
  const localIp = o.localIp ?? '127.0.0.2';
  const localPort = o.localPort ?? (await freePort(localIp));
  const dir = await mkdtemp(join(tmpdir(), 'sipp-'));
  const errorFile = join(dir, 'errors.log');
  const args: string[] = [];
  if (o.remote) args.push(o.remote);
  if (o.scenario.startsWith('sn:')) args.push('-sn', o.scenario.slice(3));
  else args.push('-sf', join(SIPP_DIR, o.scenario));
  args.push('-i', localIp, '-p', String(localPort), '-t', o.transport ?? 'u1');
  args.push('-m', String(o.calls ?? 1), '-nostdin', '-trace_err', '-error_file', errorFile);
  args.push('-timeout', `${o.timeoutSeconds ?? 20}s`, '-timeout_error');
  if (o.rate) args.push('-r', String(o.rate));
  if (o.service) args.push('-s', o.service);
  if (o.auth) args.push('-au', o.auth.user, '-ap', o.auth.password);
  for (const [k, v] of Object.entries(o.keys ?? {})) args.push('-key', k, v);
  args.push(...(o.extra ?? []));
  const child = spawn('sipp', args, { cwd: SIPP_DIR, stdio: ['ignore', 'pipe', 'pipe'] });
  // A sipp that cannot start (not installed) rejects here instead of leaving callers waiting.
  const started = spawned(child, 'sipp');
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const done = new Promise<SippResult>((res) => {
    child.on('close', async (code) => {
      const errors = withoutWatchdog(await readFile(errorFile, 'utf8').catch(() => ''));
      await rm(dir, { recursive: true, force: true });
      res({ code, stdout, stderr, errors, localPort });
    });
  });
  try {
    await started;
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  // Give sipp a moment to bind before callers use it.
  await new Promise((r) => setTimeout(r, 150));
  return {
    localPort,
    done,
    kill: () => {
      if (child.exitCode === null && child.pid) process.kill(child.pid, 'SIGTERM');
    },
  };
}

export async function runSipp(o: SippOptions): Promise<SippResult> {
  return (await startSipp(o)).done;
}

/** The error trace without sipp's watchdog lines; empty when nothing else is left. */
export function withoutWatchdog(trace: string): string {
  const lines = trace
    .split('\n')
    .filter((l) => l.trim() !== '' && !/Overload warning: the (minor|major) watchdog/.test(l));
  return lines.length === 0 || lines.every((l) => /^The following events occurred:/.test(l))
    ? ''
    : lines.join('\n');
}
