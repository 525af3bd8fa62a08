/**
 * Account rows as this node sees them: Postgres is the record; rows read are cached here briefly and
 * evicted on change, locally and on other nodes through the change bus, so a status change is seen
 * everywhere at once rather than after the cache lifetime.
 */
import type { Logger } from '../../logger.js';
import type { Account, AccountChangeBus, AccountStore, AccountUpdate } from '../../store/account-store.js';

const CACHE_TTL_MS = 30_000;
/** Deeper trees than this are not walked (a guard against a parent cycle in corrupt data). */
const MAX_DEPTH = 64;

export class AccountRecords {
  private readonly cache = new Map<string, { account: Account; at: number }>();
  private readonly emailIndex = new Map<string, string>();

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
    if (hit && this.deps.now() - hit.at < CACHE_TTL_MS) return hit.account;
    const account = await this.store.findBySid(sid);
    if (account) this.remember(account);
    else this.cache.delete(sid);
    return account;
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
    try {
      rows = await this.store.updateMany(updates);
    } catch (e) {
      for (const u of updates) this.forget(u.sid);
      throw e;
    }
    for (const row of rows) {
      this.remember(row);
      await this.deps.bus
        ?.publish(row.sid)
        .catch((e) => this.deps.logger.warn({ err: e }, 'account bus publish failed'));
    }
    return rows;
  }

  remember(account: Account): void {
    this.cache.set(account.sid, { account, at: this.deps.now() });
    this.emailIndex.set(account.emailAddress, account.sid);
  }

  /** Evicts an account from this node; the next use reloads the record. */
  forget(sid: string): void {
    const hit = this.cache.get(sid);
    if (hit) this.emailIndex.delete(hit.account.emailAddress);
    this.cache.delete(sid);
  }
}
