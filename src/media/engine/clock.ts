/**
 * The engine's one 20 ms clock. It corrects itself against `performance.now()` (each deadline is
 * start + n × 20 ms, so timer slop never accumulates), catches up a few missed ticks after a stall
 * so packet rates stay exact, and skips (and counts) beyond that. Every tick's lateness is kept for
 * the load report.
 */
import { MEDIA } from './constants.js';

/** Lateness percentiles and CPU over a window (see `LoadWindow.take`). */
export interface LoadSample {
  readonly ticks: number;
  readonly skippedTicks: number;
  readonly lateP50Ms: number;
  readonly lateP99Ms: number;
  readonly lateMaxMs: number;
  /** Time spent inside the tick (all endpoints' work), percentiles. */
  readonly workP50Ms: number;
  readonly workP99Ms: number;
  readonly workMaxMs: number;
  readonly cpuPercent: number;
}

/** Collects tick lateness and process CPU between two `take()` calls (capped at the last 60 s of ticks). */
export class LoadWindow {
  private readonly ring = new Float64Array(MEDIA.LOAD_WINDOW_TICKS);
  private readonly work = new Float64Array(MEDIA.LOAD_WINDOW_TICKS);
  private count = 0;
  private skipped = 0;
  private cpuAt = process.cpuUsage();
  private wallAt = performance.now();

  add(lateMs: number, workMs = 0): void {
    this.ring[this.count % this.ring.length] = lateMs;
    this.work[this.count % this.work.length] = workMs;
    this.count++;
  }

  addSkipped(n: number): void {
    this.skipped += n;
  }

  /** Returns the window since the previous call and starts a new one. */
  take(): LoadSample {
    const n = Math.min(this.count, this.ring.length);
    const sorted = Array.from(this.ring.subarray(0, n)).sort((a, b) => a - b);
    const work = Array.from(this.work.subarray(0, n)).sort((a, b) => a - b);
    const pct = (p: number, xs = sorted): number => (n === 0 ? 0 : xs[Math.min(n - 1, Math.floor(p * n))]!);
    const cpu = process.cpuUsage(this.cpuAt);
    const wall = performance.now() - this.wallAt;
    const sample: LoadSample = {
      ticks: this.count,
      skippedTicks: this.skipped,
      lateP50Ms: round(pct(0.5)),
      lateP99Ms: round(pct(0.99)),
      lateMaxMs: round(n === 0 ? 0 : sorted[n - 1]!),
      workP50Ms: round(pct(0.5, work)),
      workP99Ms: round(pct(0.99, work)),
      workMaxMs: round(n === 0 ? 0 : work[n - 1]!),
      cpuPercent: wall > 0 ? round(((cpu.user + cpu.system) / 1000 / wall) * 100) : 0,
    };
    this.count = 0;
    this.skipped = 0;
    this.cpuAt = process.cpuUsage();
    this.wallAt = performance.now();
    return sample;
  }
}

function round(v: number): number {
  return Math.round(v * 100) / 100;
}

/** Self-correcting periodic clock; `onTick(lateMs)` runs once per period. */
export class Clock {
  private timer: NodeJS.Timeout | null = null;
  private next = 0;
  /** Ticks run so far. */
  tickCount = 0;

  constructor(
    private readonly onTick: (lateMs: number) => void,
    private readonly load: LoadWindow,
    private readonly periodMs: number = MEDIA.TICK_MS,
    /** Time source (tests inject one to simulate stalls). */
    private readonly now: () => number = () => performance.now(),
  ) {}

  start(): void {
    if (this.timer) return;
    this.next = this.now() + this.periodMs;
    this.schedule();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    const delay = Math.max(0, Math.floor(this.next - this.now()));
    this.timer = setTimeout(() => this.fire(), delay);
  }

  private fire(): void {
    let now = this.now();
    // Node may wake up to 1 ms early (ms truncation); run the tick then rather than spin.
    let ran = 0;
    while (now >= this.next - 1) {
      const late = now - this.next;
      this.tickCount++;
      this.onTick(late);
      this.load.add(late, this.now() - now);
      this.next += this.periodMs;
      ran++;
      now = this.now();
      if (ran >= MEDIA.MAX_CATCH_UP_TICKS && now >= this.next) {
        const missed = Math.floor((now - this.next) / this.periodMs) + 1;
        this.load.addSkipped(missed);
        this.next += missed * this.periodMs;
        break;
      }
    }
    if (this.timer) this.schedule();
  }
}
