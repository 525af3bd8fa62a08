/**
 * The measuring half of the in-process micro-benchmarks (bench:machines, bench:webhooks): CPU per
 * item as the median of several rounds after a warm-up, heap bytes per item measured in a child
 * process whose young space is large enough that no GC runs inside a round, and the printed row.
 */
import { spawnSync } from 'node:child_process';
import v8 from 'node:v8';

/** One round: `items` calls, requests… run to completion. */
export type Round = (items: number) => Promise<void>;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** µs of process CPU (user + system) per item: the median of `rounds` rounds after one warm-up round. */
export async function cpuPerItem(
  round: Round,
  items: number,
  rounds: number,
): Promise<{ us: number; all: number[] }> {
  await round(items); // warm-up: optimised code, grown heap, open connections
  const all: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t = process.cpuUsage();
    await round(items);
    const d = process.cpuUsage(t);
    all.push((d.user + d.system) / items);
  }
  return { us: median(all), all };
}

/**
 * Heap growth per item over rounds of `items`, after a warm-up round of `warmItems`: run in the
 * child `allocationChild` starts (it needs `--expose-gc` and a young space no round fills).
 */
export async function bytesPerItem(
  round: Round,
  warmItems: number,
  items: number,
  rounds: number,
): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  await round(warmItems);
  const all: number[] = [];
  for (let r = 0; r < rounds; r++) {
    gc();
    const before = v8.getHeapStatistics().used_heap_size;
    await round(items);
    all.push((v8.getHeapStatistics().used_heap_size - before) / items);
  }
  return median(all);
}

/**
 * Runs `script` again as the allocation child (`--alloc` plus `args`) with GC exposed and a 128 MB
 * young space, and returns the `{row: bytes}` JSON it prints; {} (its stderr shown) when it fails.
 */
export function allocationChild(script: string, args: readonly string[]): Record<string, number> {
  const child = spawnSync(
    process.execPath,
    [
      ...process.execArgv,
      '--expose-gc',
      '--min-semi-space-size=128',
      '--max-semi-space-size=128',
      script,
      '--alloc',
      ...args,
    ],
    { encoding: 'utf8' },
  );
  if (child.status !== 0) console.error(child.error ?? child.stderr);
  return child.status === 0 ? JSON.parse(child.stdout) : {};
}

/** A printed row: median µs (and the minimum, least disturbed by other processes), kB and the rounds. */
export function row(
  name: string,
  width: number,
  unit: string,
  cpu: { us: number; all: number[] },
  bytes?: number,
): string {
  const kb = bytes === undefined ? 'n/a' : `${(bytes / 1024).toFixed(1)} kB`;
  return (
    `${name.padEnd(width)} ${cpu.us.toFixed(1).padStart(7)} µs CPU/${unit} (min ${Math.min(...cpu.all).toFixed(1)})  ` +
    `${kb.padStart(9)} allocated/${unit}  (rounds: ${cpu.all.map((x) => x.toFixed(0)).join(' ')})`
  );
}
