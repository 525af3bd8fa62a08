/**
 * ExpiringEntries: an entry lives for the lifetime from its last set, expired ones are dropped
 * from the front, and a full table refuses more.
 */
import { describe, expect, it } from 'vitest';
import { ExpiringEntries } from '../../../src/sip/expiring-entries.js';

describe('ExpiringEntries', () => {
  it('keeps an entry for its lifetime from the last set, then forgets it', () => {
    let now = 0;
    const e = new ExpiringEntries<string>(1_000, () => now);
    e.set('a', 'one');
    now = 500;
    e.set('b', 'two');
    e.set('a', 'again');
    now = 1_200;
    expect(e.get('b')).toBe('two');
    expect(e.get('a')).toBe('again');
    now = 1_500;
    expect(e.get('b')).toBeUndefined();
    expect(e.get('a')).toBeUndefined();
    expect(e.size).toBe(0);
  });

  it('refuses a new entry when full and forgets a deleted one', () => {
    const e = new ExpiringEntries<number>(1_000, () => 0, 2);
    expect(e.set('a', 1)).toBe(true);
    expect(e.set('b', 2)).toBe(true);
    expect(e.set('c', 3)).toBe(false);
    e.delete('a');
    expect(e.get('a')).toBeUndefined();
    expect(e.set('c', 3)).toBe(true);
    expect(e.size).toBe(2);
  });
});
