import { describe, expect, it } from 'vitest';
import { PageCache } from '../../../src/http/page-cache.js';

const body = (text: string) => Buffer.from(text);

describe('PageCache', () => {
  it('sends a kept page only while its version is current', async () => {
    const cache = new PageCache();
    let current = 3;
    const version = async () => current;
    expect(await cache.lookup('k', version)).toBeNull();
    cache.store('k', 3, body('page 3'));
    expect((await cache.lookup('k', version))?.toString()).toBe('page 3');
    current = 4;
    expect(await cache.lookup('k', version)).toBeNull();
  });

  it('keeps the newest version when concurrent readers store', async () => {
    const cache = new PageCache();
    cache.store('k', 5, body('page 5'));
    cache.store('k', 4, body('page 4'));
    cache.store('k', 5, body('page 5 again'));
    expect((await cache.lookup('k', async () => 5))?.toString()).toBe('page 5');
  });

  it('skips the version read for a while on a key whose pages change before serving once', async () => {
    let now = 1000;
    const cache = new PageCache(undefined, () => now);
    let reads = 0;
    const version = async () => {
      reads++;
      return 2;
    };
    cache.store('k', 1, body('page 1'));
    cache.store('k', 2, body('page 2')); // page 1 never served: the key is cold
    expect(await cache.lookup('k', version)).toBeNull();
    expect(reads).toBe(0);
    now += 1001;
    expect((await cache.lookup('k', version))?.toString()).toBe('page 2');
    expect(reads).toBe(1);
  });

  it('drops the least recently used pages beyond its bounds and never keeps an outsized one', async () => {
    const cache = new PageCache({ entries: 2, bytes: 800 });
    const v = async () => 1;
    cache.store('a', 1, body('a'));
    cache.store('b', 1, body('b'));
    await cache.lookup('a', v); // a is now the most recently used
    cache.store('c', 1, body('c'));
    expect(cache.size).toBe(2);
    expect(await cache.lookup('b', v)).toBeNull();
    expect((await cache.lookup('a', v))?.toString()).toBe('a');
    cache.store('big', 1, Buffer.alloc(101));
    expect(await cache.lookup('big', v)).toBeNull();
    cache.store('d', 1, Buffer.alloc(100));
    cache.store('e', 1, Buffer.alloc(100));
    expect(cache.size).toBe(2);
  });
});
