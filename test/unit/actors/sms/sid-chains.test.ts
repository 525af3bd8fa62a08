/** Per-message chains: order within a message, independence across messages, errors do not break a chain. */
import { describe, expect, it } from 'vitest';
import { SidChains } from '../../../../src/actors/sms/sid-chains.js';
import { deferred } from './fixtures.js';

describe('SidChains', () => {
  it('runs the jobs of one sid in order and other sids independently', async () => {
    const errors: unknown[] = [];
    const chains = new SidChains((err) => errors.push(err));
    const gate = deferred<void>();
    const log: string[] = [];
    chains.add('a', async () => {
      await gate.promise;
      log.push('a1');
    });
    chains.add('a', async () => {
      log.push('a2');
    });
    chains.add('b', async () => {
      log.push('b1');
    });
    await chains.tail('b');
    expect(log).toEqual(['b1']);
    expect(chains.size).toBe(1);
    gate.resolve();
    await chains.tail('a');
    expect(log).toEqual(['b1', 'a1', 'a2']);
    expect(errors).toEqual([]);
  });

  it('reports a failed job with its sid and goes on with the next one; tails never reject', async () => {
    const errors: Array<[unknown, string]> = [];
    const chains = new SidChains((err, sid) => errors.push([err, sid]));
    const boom = new Error('boom');
    const log: string[] = [];
    chains.add('a', async () => {
      throw boom;
    });
    chains.add('a', async () => {
      log.push('after');
    });
    await expect(chains.tail('a')).resolves.toBeUndefined();
    expect(errors).toEqual([[boom, 'a']]);
    expect(log).toEqual(['after']);
  });

  it('forgets a sid once its chain is done; drain waits for jobs added while draining', async () => {
    const chains = new SidChains(() => {});
    const log: string[] = [];
    chains.add('a', async () => {
      log.push('a');
      chains.add('b', async () => {
        log.push('b');
      });
    });
    await chains.drain();
    expect(log).toEqual(['a', 'b']);
    expect(chains.size).toBe(0);
    await expect(chains.tail('a')).resolves.toBeUndefined();
  });
});
