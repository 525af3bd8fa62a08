import { describe, expect, it } from 'vitest';
import { Reorderer } from '../../../../src/media/engine/reorder.js';

function run(seqs: number[], maxHeld = 3, flushAt: number[] = []): { out: number[]; late: number } {
  const out: number[] = [];
  const r = new Reorderer<number>((x) => out.push(x), maxHeld);
  seqs.forEach((s, i) => {
    r.push(7, s, s);
    if (flushAt.includes(i)) r.flush();
  });
  return { out, late: r.late };
}

describe('Reorderer', () => {
  it('passes packets in order straight through', () => {
    expect(run([1, 2, 3, 4]).out).toEqual([1, 2, 3, 4]);
  });

  it('restores order when a packet arrives after its successors', () => {
    expect(run([1, 3, 4, 2, 5]).out).toEqual([1, 2, 3, 4, 5]);
    expect(run([10, 12, 11, 14, 13]).out).toEqual([10, 11, 12, 13, 14]);
  });

  it('gives a gap up when more than maxHeld packets wait, and drops the straggler as late', () => {
    const r = run([1, 3, 4, 5, 6, 2, 7]);
    expect(r.out).toEqual([1, 3, 4, 5, 6, 7]);
    expect(r.late).toBe(1);
  });

  it('flushes held packets when asked (playout ran dry)', () => {
    expect(run([1, 3, 4], 3, [2]).out).toEqual([1, 3, 4]);
  });

  it('drops duplicates, follows wrap-around, a restart and a new SSRC', () => {
    expect(run([65534, 65535, 65535, 0, 1]).out).toEqual([65534, 65535, 0, 1]);
    expect(run([65535, 1, 0]).out).toEqual([65535, 0, 1]);
    expect(run([5, 6, 5000, 5001]).out).toEqual([5, 6, 5000, 5001]);
    const out: number[] = [];
    const r = new Reorderer<number>((x) => out.push(x));
    r.push(1, 100, 100);
    r.push(1, 102, 102);
    r.push(2, 7, 7);
    expect(out).toEqual([100, 102, 7]);
  });
});
