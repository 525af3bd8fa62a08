import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Clock, LoadWindow } from '../../../../src/media/engine/clock.js';

describe('Clock', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('ticks every 20 ms against absolute deadlines', () => {
    const lates: number[] = [];
    const clock = new Clock((late) => lates.push(late), new LoadWindow());
    clock.start();
    vi.advanceTimersByTime(1000);
    expect(clock.tickCount).toBe(50);
    expect(Math.max(...lates.map(Math.abs))).toBeLessThanOrEqual(1);
    clock.stop();
    vi.advanceTimersByTime(100);
    expect(clock.tickCount).toBe(50);
  });

  it('catches up after a short stall and skips (counting) after a long one', () => {
    // `lost` is time the process did not get (a stall): the clock sees it, the fake timers do not.
    let lost = 0;
    const lates: number[] = [];
    const load = new LoadWindow();
    const clock = new Clock(
      (late) => lates.push(late),
      load,
      20,
      () => performance.now() + lost,
    );
    clock.start();
    vi.advanceTimersByTime(200);
    expect(clock.tickCount).toBe(10);

    // 70 ms stall: the next timer fires 70 ms late; the due tick and the 3 missed ones run at once.
    lost += 70;
    vi.advanceTimersByTime(20);
    expect(clock.tickCount).toBe(14);
    expect(lates.slice(-4).map(Math.round)).toEqual([70, 50, 30, 10]);
    expect(load.take()).toMatchObject({ skippedTicks: 0, lateMaxMs: 70 });

    // 500 ms stall: 5 ticks catch up, the rest are skipped and counted; the clock stays on its grid.
    lost += 500;
    vi.advanceTimersByTime(20);
    expect(clock.tickCount).toBe(19);
    const { skippedTicks } = load.take();
    expect(skippedTicks).toBe(21);
    vi.advanceTimersByTime(20);
    expect(clock.tickCount).toBe(20);
    expect(Math.abs(lates.at(-1)!)).toBeLessThanOrEqual(1);
    clock.stop();
  });
});
