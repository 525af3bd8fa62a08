/** GroupCommit: requests arriving while a batch is written go together in the next one. */
import { describe, expect, it, vi } from 'vitest';
import { GroupCommit } from '../../../../src/store/postgres/group-commit.js';

describe('GroupCommit', () => {
  it('writes at once when idle, batches while busy, keeps order and maps results back', async () => {
    const batches: number[][] = [];
    const gates: Array<() => void> = [];
    const gc = new GroupCommit<number, string>(async (items) => {
      batches.push(items);
      await new Promise<void>((r) => gates.push(r));
      return items.map((i) => `r${i}`);
    }, 1);
    const first = gc.add(1);
    const rest = [2, 3, 4].map((i) => gc.add(i));
    expect(batches).toEqual([[1]]);
    gates.shift()?.();
    await expect(first).resolves.toBe('r1');
    await new Promise((r) => setTimeout(r, 0));
    expect(batches).toEqual([[1], [2, 3, 4]]);
    gates.shift()?.();
    await expect(Promise.all(rest)).resolves.toEqual(['r2', 'r3', 'r4']);
  });

  it('caps a batch, runs up to `inFlight` batches, and rejects every item of a failed batch', async () => {
    const sizes: number[] = [];
    let running = 0;
    let maxRunning = 0;
    const gc = new GroupCommit<number, number>(
      async (items) => {
        sizes.push(items.length);
        running++;
        maxRunning = Math.max(maxRunning, running);
        await new Promise((r) => setTimeout(r, 5));
        running--;
        if (items.includes(13)) throw new Error('boom');
        return items;
      },
      2,
      3,
    );
    const results = await Promise.allSettled(Array.from({ length: 14 }, (_, i) => gc.add(i)));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(3);
    expect(maxRunning).toBe(2);
    const rejected = results.filter((r) => r.status === 'rejected');
    expect(rejected.length).toBeGreaterThanOrEqual(1);
    expect(results[0]).toEqual({ status: 'fulfilled', value: 0 });
    expect(results[13]?.status).toBe('rejected');
  });

  it('with keyOf, puts at most one item per key in a batch; the others go in later batches in order', async () => {
    const batches: string[][] = [];
    const gc = new GroupCommit<string, string>(
      async (items) => {
        batches.push(items);
        await new Promise((r) => setTimeout(r, 1));
        return items;
      },
      1,
      10,
      (item) => item.split(':')[0] ?? '',
    );
    const busy = gc.add('z:0');
    const results = Promise.all(['a:1', 'b:1', 'a:2', 'c:1', 'a:3', 'b:2'].map((i) => gc.add(i)));
    await busy;
    await expect(results).resolves.toEqual(['a:1', 'b:1', 'a:2', 'c:1', 'a:3', 'b:2']);
    expect(batches).toEqual([['z:0'], ['a:1', 'b:1', 'c:1'], ['a:2', 'b:2'], ['a:3']]);
  });

  it('with a linger, an idle store waits that long for more requests, and a full batch goes at once', async () => {
    vi.useFakeTimers();
    try {
      const batches: number[][] = [];
      const gc = new GroupCommit<number, number>(
        async (items) => {
          batches.push(items);
          return items;
        },
        1,
        3,
        undefined,
        10,
      );
      const first = [gc.add(1), gc.add(2)];
      await vi.advanceTimersByTimeAsync(9);
      expect(batches).toEqual([]);
      await vi.advanceTimersByTimeAsync(1);
      expect(batches).toEqual([[1, 2]]);
      await expect(Promise.all(first)).resolves.toEqual([1, 2]);
      const full = [gc.add(3), gc.add(4), gc.add(5)];
      await vi.advanceTimersByTimeAsync(0);
      expect(batches).toEqual([
        [1, 2],
        [3, 4, 5],
      ]);
      await expect(Promise.all(full)).resolves.toEqual([3, 4, 5]);
    } finally {
      vi.useRealTimers();
    }
  });
});
