/**
 * The profile store with its links cached: every account representation carries the Link header of
 * the account's effective profile (spec §Profile resolution), so without a cache each GET of an
 * account is a Postgres query. Links change rarely (an administrator links or unlinks a profile), so
 * any link change through this store tells every node (this one included) to forget all links;
 * entries also expire after a minute in case a notice is lost (a Redis reconnect).
 *
 * A lookup that started before a change notice arrived does not store its (possibly older) answer:
 * each notice advances a generation, and answers read under an older generation are returned but
 * not kept.
 */
// The same pub/sub shape as the accounts' notices.
import type { AccountChangeBus as ChangeBus } from './account-store.js';
import type { Extension, Profile, ProfileStore } from './profile-store.js';

const TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;
/** The only notice: links changed somewhere. */
const LINKS = 'links';

export class CachedProfileStore implements ProfileStore {
  /** target sid → the profile linked to it (null: none), with its expiry. */
  private readonly links = new Map<string, { readonly profileSid: string | null; readonly until: number }>();
  private generation = 0;

  constructor(
    private readonly inner: ProfileStore,
    private readonly bus: ChangeBus,
    private readonly now: () => number = Date.now,
  ) {}

  /** Listens for link changes made on any node. */
  async start(): Promise<void> {
    await this.bus.subscribe(() => this.forget());
  }

  async firstLinked(targetSids: readonly string[]): Promise<string | null> {
    const now = this.now();
    const known = new Map<string, string | null>();
    const missing: string[] = [];
    for (const sid of targetSids) {
      const hit = this.links.get(sid);
      if (hit === undefined || hit.until <= now) missing.push(sid);
      else known.set(sid, hit.profileSid);
    }
    if (missing.length > 0) {
      const generation = this.generation;
      const found = await Promise.all(missing.map((sid) => this.inner.firstLinked([sid])));
      const keep = generation === this.generation;
      if (keep && this.links.size + missing.length > MAX_ENTRIES) this.links.clear();
      const until = this.now() + TTL_MS;
      for (let i = 0; i < missing.length; i++) {
        const sid = missing[i] as string;
        const profileSid = found[i] ?? null;
        known.set(sid, profileSid);
        if (keep) this.links.set(sid, { profileSid, until });
      }
    }
    for (const sid of targetSids) {
      const profileSid = known.get(sid);
      if (profileSid) return profileSid;
    }
    return null;
  }

  async insert(p: Profile, linkTo?: string): Promise<void> {
    await this.inner.insert(p, linkTo);
    if (linkTo !== undefined) await this.changed();
  }

  async delete(sid: string): Promise<boolean> {
    const deleted = await this.inner.delete(sid);
    if (deleted) await this.changed();
    return deleted;
  }

  async link(profileSid: string, targetSid: string): Promise<void> {
    await this.inner.link(profileSid, targetSid);
    await this.changed();
  }

  async unlink(profileSid: string, targetSid: string): Promise<boolean> {
    const unlinked = await this.inner.unlink(profileSid, targetSid);
    if (unlinked) await this.changed();
    return unlinked;
  }

  get(sid: string): Promise<Profile | null> {
    return this.inner.get(sid);
  }

  list(): Promise<Profile[]> {
    return this.inner.list();
  }

  update(sid: string, document: unknown): Promise<Profile | null> {
    return this.inner.update(sid, document);
  }

  linkedTargets(profileSid: string): Promise<string[]> {
    return this.inner.linkedTargets(profileSid);
  }

  insertExtension(e: Extension): Promise<boolean> {
    return this.inner.insertExtension(e);
  }

  getExtension(sid: string): Promise<Extension | null> {
    return this.inner.getExtension(sid);
  }

  updateExtension(
    sid: string,
    patch: Partial<Pick<Extension, 'enabled' | 'configurationData' | 'accountSid'>>,
  ): Promise<Extension | null> {
    return this.inner.updateExtension(sid, patch);
  }

  extensionOf(accountSid: string, name: string): Promise<Extension | null> {
    return this.inner.extensionOf(accountSid, name);
  }

  private forget(): void {
    this.generation++;
    this.links.clear();
  }

  /** Forgets here at once (this node's next read sees the write), then tells the others. */
  private async changed(): Promise<void> {
    this.forget();
    await this.bus.publish(LINKS);
  }
}
