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
/**
 * A link used in its last REFRESH_BEFORE_MS is looked up again in the background, so a hot account
 * never waits for Postgres when its entry runs out (answers stay at most TTL_MS old, as before).
 */
const REFRESH_BEFORE_MS = 15_000;
const MAX_ENTRIES = 10_000;
/** The only notice: links changed somewhere. */
const LINKS = 'links';

export class CachedProfileStore implements ProfileStore {
  /** target sid → the profile linked to it (null: none), with its expiry. */
  private readonly links = new Map<string, { readonly profileSid: string | null; readonly until: number }>();
  /** Lookups under way, by sid (see load). */
  private readonly loading = new Map<string, Promise<string | null>>();
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
    // Every link known and fresh (the steady state of a hot account): no allocation, no wait.
    const now = this.now();
    for (const sid of targetSids) {
      const hit = this.links.get(sid);
      if (hit === undefined || hit.until <= now) return this.lookUp(targetSids);
      if (hit.until - now < REFRESH_BEFORE_MS) void this.load(sid).catch(() => {});
      if (hit.profileSid !== null) return hit.profileSid;
    }
    return null;
  }

  /** firstLinked() when some link is unknown or expired: waits for those lookups. */
  private async lookUp(targetSids: readonly string[]): Promise<string | null> {
    const now = this.now();
    const found = await Promise.all(
      targetSids.map((sid) => {
        const hit = this.links.get(sid);
        return hit === undefined || hit.until <= now ? this.load(sid) : hit.profileSid;
      }),
    );
    for (const profileSid of found) if (profileSid) return profileSid;
    return null;
  }

  /**
   * One lookup per sid at a time: concurrent requests for an account whose link expired share it
   * (fifty connections would otherwise send fifty identical queries at the same instant). A lookup
   * that started before a change notice is not shared after it (see forget) and its answer is not
   * kept.
   */
  private load(sid: string): Promise<string | null> {
    const pending = this.loading.get(sid);
    if (pending) return pending;
    const generation = this.generation;
    const lookup = this.inner.firstLinked([sid]).then(
      (found) => {
        const profileSid = found ?? null;
        if (generation === this.generation) {
          if (this.loading.get(sid) === lookup) this.loading.delete(sid);
          if (this.links.size >= MAX_ENTRIES) this.links.clear();
          this.links.set(sid, { profileSid, until: this.now() + TTL_MS });
        }
        return profileSid;
      },
      (e: unknown) => {
        if (this.loading.get(sid) === lookup) this.loading.delete(sid);
        throw e;
      },
    );
    this.loading.set(sid, lookup);
    return lookup;
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
    this.loading.clear();
  }

  /** Forgets here at once (this node's next read sees the write), then tells the others. */
  private async changed(): Promise<void> {
    this.forget();
    await this.bus.publish(LINKS);
  }
}
