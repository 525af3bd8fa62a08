/**
 * CachedClientStore over an in-memory store and bus (the two-node behaviour over real Redis is in
 * test/integration/sip/registrar-cache.test.ts): hits never reach the store, misses are cached,
 * a notice for the account forgets its clients and every miss, a lookup that was in flight when a
 * notice arrived is not kept, and entries age out.
 */
import { describe, expect, it } from 'vitest';
import type { AccountChangeBus } from '../../../src/store/account-store.js';
import { CachedClientStore } from '../../../src/store/cached-client-store.js';
import type { Client, ClientPatch, ClientStore, DigestSubject } from '../../../src/store/client-store.js';

class MemoryBus implements AccountChangeBus {
  private readonly listeners: ((sid: string) => void)[] = [];
  async publish(sid: string): Promise<void> {
    for (const l of this.listeners) l(sid);
  }
  async subscribe(onChange: (sid: string) => void): Promise<void> {
    this.listeners.push(onChange);
  }
}

/** A bus that tells when its notices may have been lost (as the standalone Redis one does). */
class GapBus extends MemoryBus {
  private readonly gapListeners: (() => void)[] = [];
  watchGaps(onGap: () => void): boolean {
    this.gapListeners.push(onGap);
    return true;
  }
  /** The subscription came back: whatever was published meanwhile never arrived. */
  reconnected(): void {
    for (const l of this.gapListeners) l();
  }
}

const client = (login: string, accountSid: string, ha1: string): Client => ({
  sid: `CL${login}`,
  accountSid,
  organizationSid: 'OR1',
  login,
  friendlyName: login,
  apiVersion: '2012-04-24',
  status: 1,
  ha1,
  realm: 'example.test',
  voiceUrl: null,
  voiceMethod: 'POST',
  voiceFallbackUrl: null,
  voiceFallbackMethod: 'POST',
  voiceApplicationSid: null,
  dateCreated: new Date(0),
  dateUpdated: new Date(0),
});

/** The rows, a lookup counter and, when set, a gate every lookup waits on. */
class MemoryClients implements ClientStore {
  readonly rows = new Map<string, Client>();
  lookups = 0;
  gate: Promise<void> | null = null;
  async findForDigest(_domain: string, login: string): Promise<DigestSubject | null> {
    this.lookups++;
    const row = this.rows.get(login);
    await this.gate;
    return row ? { client: row, accountStatus: 'active' } : null;
  }
  async update(_accountSid: string, sid: string, patch: ClientPatch): Promise<Client | null> {
    const row = [...this.rows.values()].find((c) => c.sid === sid);
    if (!row) return null;
    const next = { ...row, ...patch } as Client;
    this.rows.set(row.login, next);
    return next;
  }
  async insert(c: Client): Promise<void> {
    this.rows.set(c.login, c);
  }
  async get(accountSid: string, sid: string): Promise<Client | null> {
    return [...this.rows.values()].find((c) => c.sid === sid && c.accountSid === accountSid) ?? null;
  }
  async list(accountSid: string): Promise<Client[]> {
    return [...this.rows.values()].filter((c) => c.accountSid === accountSid);
  }
  async delete(accountSid: string, sid: string): Promise<boolean> {
    const row = await this.get(accountSid, sid);
    return row ? this.rows.delete(row.login) : false;
  }
  async deleteAllOf(accountSid: string): Promise<void> {
    for (const c of await this.list(accountSid)) this.rows.delete(c.login);
  }
  async moveToOrganization(): Promise<void> {}
}

function setup(now = { t: 0 }) {
  const inner = new MemoryClients();
  const clientBus = new MemoryBus();
  const accountBus = new MemoryBus();
  const store = new CachedClientStore(inner, clientBus, accountBus, {
    ttlMs: 1000,
    now: () => now.t,
  });
  return { inner, clientBus, accountBus, store, now };
}

describe('CachedClientStore', () => {
  it('answers a repeated lookup from memory, and a change through it at once', async () => {
    const { inner, store } = setup();
    await store.start();
    inner.rows.set('alice', client('alice', 'AC1', 'old'));
    expect((await store.findForDigest('Example.test', 'alice'))?.client.ha1).toBe('old');
    expect((await store.findForDigest('example.test', 'alice'))?.client.ha1).toBe('old');
    expect(inner.lookups).toBe(1);
    await store.update('AC1', 'CLalice', { ha1: 'new' });
    expect((await store.findForDigest('example.test', 'alice'))?.client.ha1).toBe('new');
  });

  it('forgets the clients of an account named by a notice from another node, and only those', async () => {
    const { inner, clientBus, accountBus, store } = setup();
    await store.start();
    inner.rows.set('alice', client('alice', 'AC1', 'a1'));
    inner.rows.set('bob', client('bob', 'AC2', 'b1'));
    await store.findForDigest('example.test', 'alice');
    await store.findForDigest('example.test', 'bob');
    inner.rows.set('alice', client('alice', 'AC1', 'a2'));
    inner.rows.set('bob', client('bob', 'AC2', 'b2'));
    await clientBus.publish('AC1');
    expect((await store.findForDigest('example.test', 'alice'))?.client.ha1).toBe('a2');
    expect((await store.findForDigest('example.test', 'bob'))?.client.ha1).toBe('b1');
    await accountBus.publish('AC2');
    expect((await store.findForDigest('example.test', 'bob'))?.client.ha1).toBe('b2');
  });

  it('caches a miss until any notice (a client may have been created)', async () => {
    const { inner, clientBus, store } = setup();
    await store.start();
    expect(await store.findForDigest('example.test', 'carol')).toBeNull();
    expect(await store.findForDigest('example.test', 'carol')).toBeNull();
    expect(inner.lookups).toBe(1);
    inner.rows.set('carol', client('carol', 'AC9', 'c1'));
    await clientBus.publish('AC9');
    expect((await store.findForDigest('example.test', 'carol'))?.client.ha1).toBe('c1');
  });

  it('does not keep a row read before a notice that arrived while the lookup was in flight', async () => {
    const { inner, clientBus, store } = setup();
    await store.start();
    inner.rows.set('dave', client('dave', 'AC1', 'd1'));
    let open = () => {};
    inner.gate = new Promise<void>((r) => {
      open = r;
    });
    const pending = store.findForDigest('example.test', 'dave');
    await clientBus.publish('AC1');
    inner.gate = null;
    open();
    expect((await pending)?.client.ha1).toBe('d1');
    inner.rows.set('dave', client('dave', 'AC1', 'd2'));
    expect((await store.findForDigest('example.test', 'dave'))?.client.ha1).toBe('d2');
  });

  it('reads the store again once an entry is older than its time to live', async () => {
    const { inner, store, now } = setup();
    await store.start();
    inner.rows.set('erin', client('erin', 'AC1', 'e1'));
    await store.findForDigest('example.test', 'erin');
    inner.rows.set('erin', client('erin', 'AC1', 'e2'));
    now.t = 999;
    expect((await store.findForDigest('example.test', 'erin'))?.client.ha1).toBe('e1');
    now.t = 1000;
    expect((await store.findForDigest('example.test', 'erin'))?.client.ha1).toBe('e2');
  });

  it('forgets everything when notices may have been lost, and keeps entries long when it can tell', async () => {
    const inner = new MemoryClients();
    const clientBus = new GapBus();
    const accountBus = new GapBus();
    const now = { t: 0 };
    const store = new CachedClientStore(inner, clientBus, accountBus, { now: () => now.t });
    await store.start();
    inner.rows.set('fay', client('fay', 'AC1', 'f1'));
    await store.findForDigest('example.test', 'fay');
    // Past the short lifetime a bus without gap reports needs, the entry still answers.
    now.t = 10 * 60_000;
    expect((await store.findForDigest('example.test', 'fay'))?.client.ha1).toBe('f1');
    expect(inner.lookups).toBe(1);
    // A password changed on another node while this node's subscription was down.
    inner.rows.set('fay', client('fay', 'AC1', 'f2'));
    clientBus.reconnected();
    expect((await store.findForDigest('example.test', 'fay'))?.client.ha1).toBe('f2');
    // A lookup in flight across a gap is not kept either.
    let open = () => {};
    inner.gate = new Promise<void>((r) => {
      open = r;
    });
    now.t = 40 * 60_000;
    const pending = store.findForDigest('example.test', 'fay');
    accountBus.reconnected();
    inner.gate = null;
    open();
    await pending;
    const before = inner.lookups;
    await store.findForDigest('example.test', 'fay');
    expect(inner.lookups).toBe(before + 1);
  });

  it('keeps the short lifetime when a bus cannot tell of lost notices', async () => {
    const inner = new MemoryClients();
    const now = { t: 0 };
    const store = new CachedClientStore(inner, new MemoryBus(), new MemoryBus(), { now: () => now.t });
    await store.start();
    inner.rows.set('gus', client('gus', 'AC1', 'g1'));
    await store.findForDigest('example.test', 'gus');
    inner.rows.set('gus', client('gus', 'AC1', 'g2'));
    now.t = 60_000;
    expect((await store.findForDigest('example.test', 'gus'))?.client.ha1).toBe('g2');
  });
});
