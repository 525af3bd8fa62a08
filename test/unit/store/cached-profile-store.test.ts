/**
 * The effective-profile link cache: hits cost no store read, a link change on any node clears it,
 * an answer read while a change notice arrived is returned but not kept, concurrent lookups share
 * one read, and a link in use is read again before it runs out.
 */
import { describe, expect, it } from 'vitest';
import type { AccountChangeBus } from '../../../src/store/account-store.js';
import { CachedProfileStore } from '../../../src/store/cached-profile-store.js';
import type { ProfileStore } from '../../../src/store/profile-store.js';
import { Gate } from '../../support/gate.js';

/** One bus shared by the "nodes" of a test, delivering synchronously. */
class LocalBus implements AccountChangeBus {
  private readonly listeners: Array<(key: string) => void> = [];
  async publish(key: string): Promise<void> {
    for (const l of this.listeners) l(key);
  }
  async subscribe(onChange: (key: string) => void): Promise<void> {
    this.listeners.push(onChange);
  }
}

/** Links in a map; counts reads; `hold` keeps the next read pending until released. */
function linkStore() {
  const links = new Map<string, string>();
  let reads = 0;
  const gate = new Gate();
  const unused = (): never => {
    throw new Error('not used by the link cache');
  };
  const store: ProfileStore = {
    insert: unused,
    get: unused,
    list: unused,
    update: unused,
    delete: unused,
    linkedTargets: unused,
    insertExtension: unused,
    getExtension: unused,
    updateExtension: unused,
    extensionOf: unused,
    async firstLinked(sids: readonly string[]) {
      reads++;
      await gate.pass();
      for (const s of sids) {
        const p = links.get(s);
        if (p) return p;
      }
      return null;
    },
    async link(profileSid: string, target: string) {
      links.set(target, profileSid);
    },
    async unlink(_profileSid: string, target: string) {
      return links.delete(target);
    },
  };
  return {
    store,
    links,
    reads: () => reads,
    holdNextRead: () => gate.close(),
  };
}

describe('CachedProfileStore', () => {
  it('answers repeated lookups from memory, in chain order', async () => {
    const inner = linkStore();
    inner.links.set('ORG', 'PR-org');
    const cache = new CachedProfileStore(inner.store, new LocalBus());
    await cache.start();
    expect(await cache.firstLinked(['AC1', 'AC0', 'ORG'])).toBe('PR-org');
    const after = inner.reads();
    expect(await cache.firstLinked(['AC1', 'AC0', 'ORG'])).toBe('PR-org');
    expect(inner.reads()).toBe(after);
  });

  it('a link made through another node clears this node’s links', async () => {
    const inner = linkStore();
    const bus = new LocalBus();
    const here = new CachedProfileStore(inner.store, bus);
    const there = new CachedProfileStore(inner.store, bus);
    await here.start();
    await there.start();
    expect(await here.firstLinked(['AC1', 'ORG'])).toBeNull();
    await there.link('PR-1', 'AC1');
    expect(await here.firstLinked(['AC1', 'ORG'])).toBe('PR-1');
    await there.unlink('PR-1', 'AC1');
    expect(await here.firstLinked(['AC1', 'ORG'])).toBeNull();
  });

  it('an answer read across a change notice is returned but not kept', async () => {
    const inner = linkStore();
    const bus = new LocalBus();
    const cache = new CachedProfileStore(inner.store, bus);
    await cache.start();
    const release = inner.holdNextRead();
    const pending = cache.firstLinked(['AC1']);
    // The link lands, and its notice arrives, while the read is in flight; the read then answers
    // from what it saw (no link).
    await bus.publish('links');
    release();
    expect(await pending).toBeNull();
    inner.links.set('AC1', 'PR-1');
    expect(await cache.firstLinked(['AC1'])).toBe('PR-1');
  });

  it('concurrent lookups share one read per sid; a lookup after a notice does not join an older read', async () => {
    const inner = linkStore();
    const bus = new LocalBus();
    const cache = new CachedProfileStore(inner.store, bus);
    await cache.start();
    const release = inner.holdNextRead();
    const first = Array.from({ length: 50 }, () => cache.firstLinked(['AC1', 'ORG']));
    expect(inner.reads()).toBe(2);
    await bus.publish('links');
    inner.links.set('AC1', 'PR-1');
    const after = cache.firstLinked(['AC1', 'ORG']);
    expect(inner.reads()).toBe(4);
    release();
    await Promise.all(first);
    expect(await after).toBe('PR-1');
    // The newer read's answer is the one kept.
    expect(await cache.firstLinked(['AC1', 'ORG'])).toBe('PR-1');
    expect(inner.reads()).toBe(4);
  });

  it('reads a link in use again shortly before it runs out, answering at once from memory', async () => {
    const inner = linkStore();
    let now = 1_000_000;
    const cache = new CachedProfileStore(inner.store, new LocalBus(), () => now);
    await cache.start();
    inner.links.set('AC1', 'PR-1');
    expect(await cache.firstLinked(['AC1'])).toBe('PR-1');
    expect(inner.reads()).toBe(1);
    now += 30_000; // well inside the minute: no read
    expect(await cache.firstLinked(['AC1'])).toBe('PR-1');
    expect(inner.reads()).toBe(1);
    inner.links.set('AC1', 'PR-2');
    const release = inner.holdNextRead();
    now += 20_000; // in the last quarter of the minute: answered from memory, read in the background
    expect(await cache.firstLinked(['AC1'])).toBe('PR-1');
    expect(inner.reads()).toBe(2);
    release();
    await new Promise((r) => setImmediate(r));
    now += 20_000; // past the first entry's minute: the refreshed one answers without a read
    expect(await cache.firstLinked(['AC1'])).toBe('PR-2');
    expect(inner.reads()).toBe(2);
  });
});
