/**
 * The number store with its routing lookup cached: every INVITE and MO message asks which hosted
 * number it is for, and numbers change rarely. Writes through this store announce the number on the
 * change bus; every node (this one included) forgets it, so a changed VoiceUrl is used by the next
 * call on any node. An entry also expires after a minute, in case a notice is lost (a Redis
 * reconnect). Misses are cached too: carrier traffic to numbers we do not host is the common case.
 */
// The same pub/sub shape as the accounts' notices (a key per notice).
import type { AccountChangeBus as ChangeBus } from './account-store.js';
import type { IncomingNumber, NumberFilter, NumberPatch, NumberStore } from './number-store.js';

const TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;
/** Notice meaning "forget every number" (an account's numbers were released together). */
const ALL = '*';

export class CachedNumberStore implements NumberStore {
  private readonly byNumber = new Map<
    string,
    { readonly n: IncomingNumber | null; readonly until: number }
  >();

  constructor(
    private readonly inner: NumberStore,
    private readonly bus: ChangeBus,
    private readonly now: () => number = Date.now,
  ) {}

  /** Listens for changes made on any node. */
  async start(): Promise<void> {
    await this.bus.subscribe((key) => {
      if (key === ALL) this.byNumber.clear();
      else this.byNumber.delete(key);
    });
  }

  async findByNumber(e164: string): Promise<IncomingNumber | null> {
    const hit = this.byNumber.get(e164);
    if (hit && hit.until > this.now()) return hit.n;
    const n = await this.inner.findByNumber(e164);
    if (this.byNumber.size >= MAX_ENTRIES) this.byNumber.clear();
    this.byNumber.set(e164, { n, until: this.now() + TTL_MS });
    return n;
  }

  async insert(n: IncomingNumber): Promise<boolean> {
    const inserted = await this.inner.insert(n);
    await this.changed(n.phoneNumber);
    return inserted;
  }

  async update(accountSid: string, sid: string, patch: NumberPatch): Promise<IncomingNumber | null> {
    const n = await this.inner.update(accountSid, sid, patch);
    if (n) await this.changed(n.phoneNumber);
    return n;
  }

  async delete(accountSid: string, sid: string): Promise<IncomingNumber | null> {
    const n = await this.inner.delete(accountSid, sid);
    if (n) await this.changed(n.phoneNumber);
    return n;
  }

  async deleteAllOf(accountSid: string): Promise<void> {
    await this.inner.deleteAllOf(accountSid);
    await this.changed(ALL);
  }

  get(accountSid: string, sid: string): Promise<IncomingNumber | null> {
    return this.inner.get(accountSid, sid);
  }

  list(filter: NumberFilter): Promise<IncomingNumber[]> {
    return this.inner.list(filter);
  }

  isTaken(e164: string): Promise<boolean> {
    return this.inner.isTaken(e164);
  }

  takenAmong(e164s: readonly string[]): Promise<Set<string>> {
    return this.inner.takenAmong(e164s);
  }

  /** Forgets here at once (the write is visible to this node's next call), then tells the others. */
  private async changed(key: string): Promise<void> {
    if (key === ALL) this.byNumber.clear();
    else this.byNumber.delete(key);
    await this.bus.publish(key);
  }
}
