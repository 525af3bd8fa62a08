/**
 * The system tools the tests, the demo and the benchmarks start, with the Debian package that
 * provides each. One table, so a missing tool is always reported with the command that installs it.
 */
import type { ChildProcess } from 'node:child_process';

/** A program we spawn and where it comes from. */
export interface SystemTool {
  readonly bin: string;
  /** Debian packages that provide it (and what it needs to be useful, e.g. sox's format plugins). */
  readonly packages: readonly string[];
  readonly why: string;
}

/** Tools `npm test` needs on PATH. */
export const TEST_TOOLS: readonly SystemTool[] = [
  { bin: 'sipp', packages: ['sip-tester'], why: 'SIP peer of the call tests' },
  { bin: 'baresip', packages: ['baresip'], why: 'SIP phone of the registrar and call tests' },
  { bin: 'espeak-ng', packages: ['espeak-ng'], why: 'text to speech for <Say>' },
  { bin: 'sox', packages: ['sox', 'libsox-fmt-all'], why: 'prompt conversion for <Play>' },
  { bin: 'curl', packages: ['curl'], why: "the demo's printed REST examples" },
  { bin: 'chromium', packages: ['chromium'], why: 'headless browser of the /docs reference test' },
  { bin: 'kamailio', packages: ['kamailio'], why: 'SIP front of the cluster tests' },
  { bin: 'openssl', packages: ['openssl'], why: 'self-signed certificate of the browser phone tests' },
];

const BY_BIN = new Map(TEST_TOOLS.map((t) => [t.bin, t]));

/** The command that installs `packages` on Debian. */
export function aptInstallCommand(packages: readonly string[]): string {
  return `apt-get install -y --no-install-recommends ${packages.join(' ')}`;
}

/** "sipp is not installed (Debian package sip-tester): apt-get install …" for a known tool. */
export function missingToolMessage(bin: string): string {
  const tool = BY_BIN.get(bin);
  if (!tool) return `${bin} is not installed or not on PATH`;
  return `${bin} is not installed (Debian package ${tool.packages.join(', ')}): ${aptInstallCommand(tool.packages)}`;
}

/** Thrown when a spawned program cannot start (ENOENT, EACCES): carries the fix in its message. */
export class ToolStartError extends Error {
  constructor(
    readonly bin: string,
    override readonly cause: Error,
  ) {
    super(
      (cause as NodeJS.ErrnoException).code === 'ENOENT'
        ? missingToolMessage(bin)
        : `cannot start ${bin}: ${cause.message}`,
    );
    this.name = 'ToolStartError';
  }
}

/**
 * Resolves once `child` has started, rejects with a `ToolStartError` when it cannot (the 'error'
 * event of a spawn that failed), so callers waiting for the program never wait for a process that
 * does not exist.
 */
export function spawned(child: ChildProcess, bin: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onSpawn = (): void => {
      child.off('error', onError);
      resolve();
    };
    const onError = (err: Error): void => {
      child.off('spawn', onSpawn);
      reject(new ToolStartError(bin, err));
    };
    child.once('spawn', onSpawn);
    child.once('error', onError);
  });
}
