import { describe, expect, it } from 'vitest';
import { type SegmentJob, SegmentQueue } from '../../../src/smpp/link-core.js';

const job = (n: number): SegmentJob => ({
  fields: { n },
  registeredDelivery: undefined,
  throttled: 0,
  notBefore: 0,
  duplicate: false,
  gate: null,
  resolve: () => {},
  reject: () => {},
});
const ns = (jobs: readonly (SegmentJob | undefined)[]) => jobs.map((j) => j?.fields.n);

describe('SegmentQueue', () => {
  it('is FIFO; jobs put back go to the head in their order, with or without room before the head', () => {
    const q = new SegmentQueue();
    for (let i = 0; i < 5; i++) q.push(job(i));
    const taken = [q.shift(), q.shift()].filter((j): j is SegmentJob => j !== undefined);
    q.unshift(taken); // room: the two slots they left
    expect(ns([q.shift(), q.shift(), q.shift()])).toEqual([0, 1, 2]);
    q.unshift([job(10), job(11), job(12), job(13), job(14)]); // more than the room left: rebuilt
    expect(q.length).toBe(7);
    expect(ns(q.drain())).toEqual([10, 11, 12, 13, 14, 3, 4]);
    expect(q.length).toBe(0);
    expect(q.shift()).toBeUndefined();
  });

  it('keeps order across compactions of a long backlog', () => {
    const q = new SegmentQueue();
    for (let i = 0; i < 5000; i++) q.push(job(i));
    const out: number[] = [];
    for (let i = 0; i < 3000; i++) {
      const j = q.shift();
      if (j) out.push(j.fields.n as number);
      if (i % 500 === 0 && j) {
        q.unshift([j]);
        out.pop();
      }
    }
    for (let i = 5000; i < 5100; i++) q.push(job(i));
    const rest = ns(q.drain());
    expect([...out, ...rest]).toEqual(Array.from({ length: 5100 }, (_, i) => i));
  });
});
