/**
 * The client store with the registrar's digest lookup cached: every REGISTER (and every INVITE from
 * a client) asks for the client's HA1 and its account's status, and these change rarely. What is
 * kept is what the database holds, the HA1, never a password.
 *
 * Invalidation is by account: a write through this store forgets, on this node at once and on every
 * other node through the client change bus, every cached client of the account the write touched;
 * an account notice (status changed: suspended, closed, reactivated) does the same, so a changed
 * password, a disabled client or a suspended account refuses the next REGISTER on any node. Misses
 * are cached too (a flood of REGISTERs for unknown logins would otherwise each cost a query); any
 * notice forgets every miss, as an insert may have filled one.
 *
 * Notices are lost while the subscription is down (a Redis reconnect): when the bus can tell that
 * it came back, everything is forgotten then, and an entry lives for `LONG_TTL_MS` — long enough
 * that a client re-registering every few minutes to an hour costs no query, short enough to pick
 * up a row changed behind the stores' back (SQL by hand). A bus that cannot tell (the Redis
 * Cluster client) leaves entries at `TTL_MS`.
 */
// The same pub/sub shape as the accounts' notices (a key per notice).
import type { AccountChangeBus as ChangeBus } from './account-store.js';
import type { Client, ClientPatch, ClientStore, DigestSubject } from './client-store.js';

const TTL_MS = 60_000;
const LONG_TTL_MS = 15 * 60_000;
const MAX_ENTRIES = 100_000;

interface Entry {
  readonly subject: DigestSubject;
  readonly until: number;
}

export class CachedClientStore implements ClientStore {
  /** Known clients by `domain\nlogin`. */
  private readonly found = new Map<string, Entry>();
  /** Lookups that found no client, by the same key: the time they expire. */
  private readonly missing = new Map<string, number>();
  /** Keys of `found` by account sid, for the account's notices. */
  private readonly byAccount = new Map<string, Set<string>>();
  /**
   * Bumped by every notice: a lookup that was in flight when a notice arrived does not fill the cache
   * (its row may predate the change the notice announces).
   */
  private generation = 0;
  private ttlMs: number;

  constructor(
    private readonly inner: ClientStore,
    private readonly clientBus: ChangeBus,
    private readonly accountBus: ChangeBus,
    private readonly options: { readonly ttlMs?: number; readonly now?: () => number } = {},
  ) {
    this.ttlMs = options.ttlMs ?? TTL_MS;
  }

  /** Listens for client and account changes made on any node, and for gaps in those notices. */
  async start(): Promise<void> {
    await this.clientBus.subscribe((accountSid) => this.forget(accountSid));
    await this.accountBus.subscribe((accountSid) => this.forget(accountSid));
    const onGap = () => this.clear();
    const tellsGaps = [this.clientBus, this.accountBus].every((bus) => bus.watchGaps?.(onGap) === true);
    if (tellsGaps && this.options.ttlMs === undefined) this.ttlMs = LONG_TTL_MS;
  }

  async findForDigest(domain: string, login: string): Promise<DigestSubject | null> {
    // Joined, not a template: the login is a slice of a request's text, and a kept key made of it
    // would keep the whole request alive.
    const key = [domain.toLowerCase(), login].join('\n');
    const now = this.now();
    const hit = this.found.get(key);
    if (hit && hit.until > now) return hit.subject;
    const missUntil = this.missing.get(key);
    if (missUntil !== undefined && missUntil > now) return null;

    const generation = this.generation;
    const subject = await this.inner.findForDigest(domain, login);
    if (generation !== this.generation) return subject;
    if (this.found.size + this.missing.size >= MAX_ENTRIES) this.clear();
    const until = this.now() + this.ttlMs;
    if (!subject) {
      this.found.delete(key);
      this.missing.set(key, until);
      return null;
    }
    this.missing.delete(key);
    this.found.set(key, { subject, until });
    const accountSid = subject.client.accountSid;
    const keys = this.byAccount.get(accountSid) ?? new Set<string>();
    keys.add(key);
    this.byAccount.set(accountSid, keys);
    return subject;
  }

  async insert(client: Client): Promise<void> {
    await this.inner.insert(client);
    await this.changed(client.accountSid);
  }

  async update(accountSid: string, sid: string, patch: ClientPatch): Promise<Client | null> {
    const client = await this.inner.update(accountSid, sid, patch);
    if (client) await this.changed(accountSid);
    return client;
  }

  async delete(accountSid: string, sid: string): Promise<boolean> {
    const deleted = await this.inner.delete(accountSid, sid);
    if (deleted) await this.changed(accountSid);
    return deleted;
  }

  async deleteAllOf(accountSid: string): Promise<void> {
    await this.inner.deleteAllOf(accountSid);
    await this.changed(accountSid);
  }

  async moveToOrganization(accountSid: string, organizationSid: string): Promise<void> {
    await this.inner.moveToOrganization(accountSid, organizationSid);
    await this.changed(accountSid);
  }

  get(accountSid: string, sid: string): Promise<Client | null> {
    return this.inner.get(accountSid, sid);
  }

  list(accountSid: string): Promise<Client[]> {
    return this.inner.list(accountSid);
  }

  /** Forgets here at once (this node's next REGISTER sees the write), then tells the others. */
  private async changed(accountSid: string): Promise<void> {
    this.forget(accountSid);
    await this.clientBus.publish(accountSid);
  }

  private forget(accountSid: string): void {
    this.generation++;
    this.missing.clear();
    for (const key of this.byAccount.get(accountSid) ?? []) this.found.delete(key);
    this.byAccount.delete(accountSid);
  }

  private clear(): void {
    this.generation++;
    this.found.clear();
    this.missing.clear();
    this.byAccount.clear();
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}
