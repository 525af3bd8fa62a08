/**
 * Summarises a V8 CPU profile (`.cpuprofile`, from `node --cpu-prof` or BENCH_CPU_PROF=<dir>):
 * self time by function and by module (a package under node_modules, a file of ours, node's
 * internals), and inclusive time by function (time with the function anywhere on the stack).
 * Usage: npx tsx ops/bench/cpu-profile-summary.ts <file.cpuprofile> [--top 30] [--calls N]
 *   [--from S --to S]   (seconds since the profile started: leave out start-up and shutdown)
 *   [--callers NAME [--depth 6] [--all-frames]]   (where the self time of functions named NAME
 *                        comes from: their stacks, innermost first, `--depth` frames of ours, or of
 *                        any module with --all-frames)
 *   [--under NAME]      (self time by function of the samples with a function named NAME on the stack)
 * With --calls, every figure is also given in ms per call (the run's successful calls).
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const args = process.argv.slice(2);
const opt = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? undefined : Number(args[i + 1]);
};
const file = args.find((a) => a.endsWith('.cpuprofile'));
if (!file) {
  console.error('usage: cpu-profile-summary.ts <file.cpuprofile> [--top N] [--calls N] [--from S --to S]');
  process.exit(2);
}
const TOP = opt('top') ?? 30;
const CALLS = opt('calls');
const FROM_US = (opt('from') ?? 0) * 1e6;
const TO_US = (opt('to') ?? Number.POSITIVE_INFINITY) * 1e6;
const CALLERS = args.includes('--callers') ? args[args.indexOf('--callers') + 1] : undefined;
const DEPTH = opt('depth') ?? 6;
const UNDER = args.includes('--under') ? args[args.indexOf('--under') + 1] : undefined;
const ALL_FRAMES = args.includes('--all-frames');

/** The module a frame belongs to: `pkg` under node_modules, `src/…` (or dist/…) of ours, or node's. */
function moduleOf(url: string): string {
  if (!url) return '(native/V8)';
  if (url.startsWith('node:')) return url;
  const path = url.replace(/^file:\/\//, '');
  const nm = path.lastIndexOf('/node_modules/');
  if (nm !== -1) {
    const rest = path.slice(nm + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const ours = /\/((?:src|dist|ops)\/.*)$/.exec(path);
  return ours ? ours[1]! : path;
}

/** A function: its name, and its file (within its package for node_modules) and line. */
function frameKey(f: CallFrame): string {
  const nm = f.url.lastIndexOf('/node_modules/');
  const where = nm === -1 ? moduleOf(f.url) : f.url.slice(nm + '/node_modules/'.length);
  return `${f.functionName || '(anonymous)'} ${where}:${f.lineNumber + 1}`;
}

/** The innermost frame and the frames above it (only the project's own unless --all-frames). */
function stackOf(id: number): string {
  const frames: string[] = [];
  for (let at: number | undefined = id; at !== undefined && frames.length < DEPTH; at = parent.get(at)) {
    const f = byId.get(at)!.callFrame;
    if (at === id || ALL_FRAMES || /^(src|dist)\//.test(moduleOf(f.url))) frames.push(frameKey(f));
  }
  return frames.join(' ← ');
}

const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const selfByFn = new Map<string, number>();
const selfByModule = new Map<string, number>();
const inclusiveByFn = new Map<string, number>();
const stacksOfCallers = new Map<string, number>();
const selfUnder = new Map<string, number>();
const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
let total = 0;
let idle = 0;
let t = 0;
for (let i = 0; i < profile.samples.length; i++) {
  t += profile.timeDeltas[i] ?? 0;
  if (t < FROM_US || t > TO_US) continue;
  // A sample's time is the gap to the next sample (the last one has none).
  const dt = profile.timeDeltas[i + 1] ?? 0;
  const node = byId.get(profile.samples[i]!)!;
  total += dt;
  if (node.callFrame.functionName === '(idle)') {
    idle += dt;
    continue;
  }
  add(selfByFn, frameKey(node.callFrame), dt);
  add(selfByModule, moduleOf(node.callFrame.url), dt);
  if (CALLERS && node.callFrame.functionName === CALLERS) add(stacksOfCallers, stackOf(node.id), dt);
  const seen = new Set<string>();
  let under = false;
  for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === UNDER) under = true;
    const key = frameKey(frame);
    if (!seen.has(key)) {
      seen.add(key);
      add(inclusiveByFn, key, dt);
    }
  }
  if (under) add(selfUnder, frameKey(node.callFrame), dt);
}

const busy = total - idle;
const ms = (us: number) => (us / 1000).toFixed(0).padStart(7);
const share = (us: number) => `${((100 * us) / Math.max(1, busy)).toFixed(1).padStart(5)}%`;
const perCall = (us: number) => (CALLS ? ` ${(us / 1000 / CALLS).toFixed(4).padStart(8)} ms/call` : '');
function table(title: string, m: Map<string, number>) {
  console.log(`\n${title} (ms, % of busy time${CALLS ? ', ms per call' : ''})`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, TOP))
    console.log(`${ms(v)} ${share(v)}${perCall(v)}  ${k}`);
}
console.log(
  `${file}: ${ms(total).trim()} ms sampled, ${ms(idle).trim()} ms idle, busy ${ms(busy).trim()} ms${perCall(busy)}`,
);
table('Self time by module', selfByModule);
table('Self time by function', selfByFn);
table('Inclusive time by function', inclusiveByFn);
if (CALLERS) table(`Stacks of ${CALLERS}`, stacksOfCallers);
if (UNDER) table(`Self time under ${UNDER}`, selfUnder);
