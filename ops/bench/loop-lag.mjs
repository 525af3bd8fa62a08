// Preloaded into a benchmark's server (`node --import ./ops/bench/loop-lag.mjs`, see BENCH_LOOP_LAG in
// support.ts): every second, the event loop's worst delay and p99 of that second go to stderr as
// `loop-lag <epoch s> max=<ms> p99=<ms>` when max is at least 20 ms, so stalls show with the second they fell in.
import { monitorEventLoopDelay } from 'node:perf_hooks';

const h = monitorEventLoopDelay({ resolution: 5 });
h.enable();
const timer = setInterval(() => {
  const max = h.max / 1e6;
  if (max >= 20)
    process.stderr.write(
      `loop-lag ${Math.floor(Date.now() / 1000)} max=${max.toFixed(0)} p99=${(h.percentile(99) / 1e6).toFixed(0)}\n`,
    );
  h.reset();
}, 1000);
timer.unref();
