/**
 * Average call duration over a sliding window (the supervisor's last hour and last 24 hours) in
 * bounded memory: one bucket per minute that saw a call end, buckets older than the longest window
 * dropped as new ones arrive, so at most 1,440 buckets whatever the call rate.
 */

const MINUTE_MS = 60_000;

interface Bucket {
  sum: number;
  count: number;
}

export class DurationWindow {
  /** Minute number (epoch ms / 60,000) → durations of the calls that ended in it, oldest first. */
  private readonly buckets = new Map<number, Bucket>();

  constructor(private readonly spanMinutes = 1440) {}

  add(at: number, seconds: number): void {
    const minute = Math.floor(at / MINUTE_MS);
    const bucket = this.buckets.get(minute);
    if (bucket) {
      bucket.sum += seconds;
      bucket.count += 1;
    } else {
      this.buckets.set(minute, { sum: seconds, count: 1 });
      this.prune(minute);
    }
  }

  /** Whole-second average of the calls that ended in the last `minutes` minutes before `now` (0 when none). */
  average(now: number, minutes: number): number {
    const { sum, count } = this.totals(now, minutes);
    return count === 0 ? 0 : Math.round(sum / count);
  }

  /** Sum and count over the last `minutes` minutes (the current minute included). */
  totals(now: number, minutes: number): Bucket {
    const first = Math.floor(now / MINUTE_MS) - minutes + 1;
    const out = { sum: 0, count: 0 };
    for (const [minute, b] of this.buckets) {
      if (minute < first) continue;
      out.sum += b.sum;
      out.count += b.count;
    }
    return out;
  }

  get size(): number {
    return this.buckets.size;
  }

  private prune(latest: number): void {
    // Map iteration follows insertion order; ends arrive nearly in time order, so the stale buckets
    // are at the front. A late bucket inserted after newer ones is dropped once it ages out too.
    const oldest = latest - this.spanMinutes + 1;
    for (const minute of this.buckets.keys()) {
      if (minute >= oldest) break;
      this.buckets.delete(minute);
    }
    if (this.buckets.size > this.spanMinutes) {
      for (const minute of this.buckets.keys()) if (minute < oldest) this.buckets.delete(minute);
    }
  }
}
