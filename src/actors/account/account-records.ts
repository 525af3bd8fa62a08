/**
 * Account rows as this node sees them: Postgres is the record; rows read are cached here briefly and
 * evicted on change, locally and on other nodes through the change bus, so a status change is seen
 * everywhere at once rather than after the cache lifetime.
 */
import type { Logger } from '../../logger.js';
import type { Account, AccountChangeBus, AccountStore, AccountUpdate } from '../../store/account-store.js';

const CACHE_TTL_MS = 30_000;
/**
 * A row used after this age is read again in the background, so a hot account never waits for
 * Postgres when its entry runs out; rows served stay younger than CACHE_TTL_MS, as before.
 */
const REFRESH_AFTER_MS = 20_000;
/** Deeper trees than this are not walked (a guard against a parent cycle in corrupt data). */
const MAX_DEPTH = 64;

export class AccountRecords {
  private readonly cache = new Map<string, { account: Account; at: number }>();
  private readonly emailIndex = new Map<string, string>();
  /** Reads under way, by sid (see load). */
  private readonly loading = new Map<string, Promise<Account | null>>();
  /** Advanced whenever rows are forgotten or written here: reads begun before are not kept. */
  private generation = 0;

  constructor(
    readonly store: AccountStore,
    private readonly deps: { bus: AccountChangeBus | null; logger: Logger; now: () => number },
  ) {}

  /** Evicts rows other nodes changed. */
  async start(): Promise<void> {
    await this.deps.bus?.subscribe((sid) => this.forget(sid));
  }

  async get(sid: string): Promise<Account | null> {
    const hit = this.cache.get(sid);
    if (hit) {
      const age = this.deps.now() - hit.at;
      if (age < CACHE_TTL_MS) {
        if (age >= REFRESH_AFTER_MS) void this.load(sid).catch(() => {});
        return hit.account;
      }
    }
    return this.load(sid);
  }

  /**
   * Reads a row from the record, one read per sid at a time: the requests of a hot account whose
   * entry ran out share it (fifty connections would otherwise send fifty identical queries, and
   * open as many pooled connections, at the same instant). A read that started before the account
   * was forgotten or updated here is not shared after it, and its row is returned but not kept.
   */
  private load(sid: string): Promise<Account | null> {
    const pending = this.loading.get(sid);
    if (pending) return pending;
    const generation = this.generation;
    const read = this.store.findBySid(sid).then(
      (account) => {
        if (this.loading.get(sid) === read) this.loading.delete(sid);
        if (generation === this.generation) {
          if (account) this.remember(account);
          else this.cache.delete(sid);
        }
        return account;
      },
      (e: unknown) => {
        if (this.loading.get(sid) === read) this.loading.delete(sid);
        throw e;
      },
    );
    this.loading.set(sid, read);
    return read;
  }

  async getByEmail(email: string): Promise<Account | null> {
    const lower = email.toLowerCase();
    const sid = this.emailIndex.get(lower);
    if (sid) {
      const a = await this.get(sid);
      if (a && a.emailAddress === lower) return a;
    }
    const account = await this.store.findByEmail(email);
    if (account) this.remember(account);
    return account;
  }

  /** An account by sid, or by (URL-decoded) email address as the spec allows in paths. */
  resolve(sidOrEmail: string): Promise<Account | null> {
    return sidOrEmail.includes('@') ? this.getByEmail(sidOrEmail) : this.get(sidOrEmail);
  }

  /** Whether `target` is `ancestorSid` or lies in its sub-account tree. */
  async isSelfOrDescendant(target: Account, ancestorSid: string): Promise<boolean> {
    let cur: Account | null = target;
    for (let depth = 0; cur && depth < MAX_DEPTH; depth++) {
      if (cur.sid === ancestorSid) return true;
      cur = cur.parentSid ? await this.get(cur.parentSid) : null;
    }
    return false;
  }

  /** Every descendant of `sid`, oldest first, read from the record (never from the cache). */
  async descendants(sid: string): Promise<Account[]> {
    const all = await this.store.listDescendants(sid);
    for (const a of all) this.remember(a);
    return all;
  }

  /** Inserts a new row and returns it as stored. */
  async insert(account: Account): Promise<Account> {
    await this.store.insert(account);
    const stored = await this.store.findBySid(account.sid);
    if (!stored) throw new Error(`account ${account.sid} vanished right after its insert`);
    this.remember(stored);
    return stored;
  }

  /**
   * Writes several rows in one transaction, then caches them and tells the other nodes. On failure
   * (a row no longer as expected: 409) the listed rows are evicted, so the next read, and so the
   * client's retry, goes back to the record.
   */
  async update(updates: ReadonlyArray<AccountUpdate>): Promise<Account[]> {
    let rows: Account[];
    this.invalidateReads();
    try {
      rows = await this.store.updateMany(updates);
    } catch (e) {
      for (const u of updates) this.forget(u.sid);
      throw e;
    }
    // A read that began while the write was under way may hold the row from before it.
    this.invalidateReads();
    for (const row of rows) {
      this.remember(row);
      await this.deps.bus
        ?.publish(row.sid)
        .catch((e) => this.deps.logger.warn({ err: e }, 'account bus publish failed'));
    }
    return rows;
  }

  /** Reads under way are neither shared nor kept any more. */
  private invalidateReads(): void {
    this.generation++;
    this.loading.clear();
  }

  remember(account: Account): void {
    this.cache.set(account.sid, { account, at: this.deps.now() });
    this.emailIndex.set(account.emailAddress, account.sid);
  }

  /** Evicts an account from this node; the next use reloads the record. */
  forget(sid: string): void {
    this.invalidateReads();
    const hit = this.cache.get(sid);
    if (hit) this.emailIndex.delete(hit.account.emailAddress);
    this.cache.delete(sid);
  }
}
