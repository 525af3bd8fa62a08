/**
 * The ordered event bus: an aggregate's events reach every observer one at a time and in order, even
 * when an observer waits; aggregates do not wait for each other; a throwing observer is logged and the
 * next one still runs; `drain` waits for what is published meanwhile.
 */
import { describe, expect, it } from 'vitest';
import { OrderedEventBus } from '../../../src/actors/ordered-event-bus.js';
import type { Logger } from '../../../src/logger.js';

interface Ev {
  readonly type: string;
  readonly key: string;
}

function harness() {
  const errors: unknown[] = [];
  const logger = { error: (obj: unknown) => errors.push(obj) } as unknown as Logger;
  const bus = new OrderedEventBus<Ev>(logger, (e) => e.key, { key: 'sid', kind: 'test' });
  return { bus, errors };
}

const tick = () => new Promise((r) => setTimeout(r, 1));

describe('OrderedEventBus', () => {
  it('observes after the publisher returns, in order per aggregate, waiting on slow observers', async () => {
    const { bus } = harness();
    const seen: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    bus.subscribe((e) => {
      seen.push(`a:${e.key}${e.type}`);
      return e.key === 'x' && e.type === '1' ? gate : undefined;
    });
    bus.subscribe((e) => void seen.push(`b:${e.key}${e.type}`));
    bus.publish({ type: '1', key: 'x' });
    bus.publish({ type: '2', key: 'x' });
    bus.publish({ type: '1', key: 'y' });
    expect(seen).toEqual([]);
    await tick();
    // x waits on its first observer; y is independent.
    expect(seen).toEqual(['a:x1', 'a:y1', 'b:y1']);
    release();
    await bus.drain();
    expect(seen).toEqual(['a:x1', 'a:y1', 'b:y1', 'b:x1', 'a:x2', 'b:x2']);
  });

  it('logs an observer that throws or rejects, and runs the next ones', async () => {
    const { bus, errors } = harness();
    const seen: string[] = [];
    bus.subscribe((e) => {
      if (e.type === 'sync') throw new Error('boom');
      return Promise.reject(new Error('later'));
    });
    bus.subscribe((e) => void seen.push(e.type));
    bus.publish({ type: 'sync', key: 'x' });
    bus.publish({ type: 'async', key: 'x' });
    await bus.drain();
    expect(seen).toEqual(['sync', 'async']);
    expect(errors).toHaveLength(2);
  });

  it('runs events published while observing, after the current one, and drain waits for them', async () => {
    const { bus } = harness();
    const seen: string[] = [];
    bus.subscribe(async (e) => {
      seen.push(e.type);
      if (e.type === 'first') {
        bus.publish({ type: 'second', key: e.key });
        await tick();
      }
    });
    bus.publish({ type: 'first', key: 'x' });
    await bus.drain();
    expect(seen).toEqual(['first', 'second']);
    // Nothing is held once the aggregate has nothing in flight: a later event is observed too.
    bus.publish({ type: 'third', key: 'x' });
    await bus.drain();
    expect(seen).toEqual(['first', 'second', 'third']);
  });
});
