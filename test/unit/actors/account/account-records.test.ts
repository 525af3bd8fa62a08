/**
 * The node's account rows: concurrent reads of one sid share one store read, a row in use is read
 * again before it runs out (answering from memory meanwhile), and a read that began before the
 * account was forgotten is neither shared nor kept after it.
 */
import { describe, expect, it } from 'vitest';
import { AccountRecords } from '../../../../src/actors/account/account-records.js';
import { createLogger } from '../../../../src/logger.js';
import { type Account, AccountStatus, type AccountStore, Role } from '../../../../src/store/account-store.js';
import { Gate } from '../../../support/gate.js';

function row(sid: string, friendlyName: string): Account {
  const at = new Date(0);
  return {
    sid,
    parentSid: null,
    organizationSid: 'OR1',
    emailAddress: `${sid.toLowerCase()}@example.test`,
    friendlyName,
    type: 'Full',
    status: AccountStatus.Active,
    suspendedBy: null,
    role: Role.Administrator,
    isSuperAdmin: false,
    authToken: '0'.repeat(32),
    passwordHash: 'x',
    dateCreated: at,
    dateUpdated: at,
  };
}

/** Rows in a map; counts findBySid; `hold()` keeps reads pending until released. */
function rowStore() {
  const rows = new Map<string, Account>();
  let reads = 0;
  const gate = new Gate();
  const unused = (): never => {
    throw new Error('not used here');
  };
  const store: AccountStore = {
    async findBySid(sid) {
      reads++;
      // The row as of the moment the read reached the store.
      const found = rows.get(sid) ?? null;
      await gate.pass();
      return found;
    },
    findByEmail: unused,
    findSuperAdmin: unused,
    listDescendants: unused,
    insert: unused,
    updateMany: unused,
    findOrganization: unused,
    listOrganizations: unused,
    insertOrganization: unused,
  };
  return {
    store,
    rows,
    reads: () => reads,
    hold: () => gate.close(),
  };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('AccountRecords', () => {
  it('concurrent reads of one sid share one store read', async () => {
    const inner = rowStore();
    inner.rows.set('AC1', row('AC1', 'one'));
    const records = new AccountRecords(inner.store, {
      bus: null,
      logger: createLogger('silent'),
      now: () => 0,
    });
    const release = inner.hold();
    const all = Array.from({ length: 50 }, () => records.get('AC1'));
    release();
    const got = await Promise.all(all);
    expect(inner.reads()).toBe(1);
    expect(new Set(got).size).toBe(1);
    expect(got[0]?.friendlyName).toBe('one');
  });

  it('reads a row in use again before it runs out, answering from memory meanwhile', async () => {
    const inner = rowStore();
    let now = 1_000_000;
    inner.rows.set('AC1', row('AC1', 'one'));
    const records = new AccountRecords(inner.store, {
      bus: null,
      logger: createLogger('silent'),
      now: () => now,
    });
    expect((await records.get('AC1'))?.friendlyName).toBe('one');
    now += 10_000;
    await records.get('AC1');
    expect(inner.reads()).toBe(1);
    inner.rows.set('AC1', row('AC1', 'two'));
    now += 15_000; // 25 s old: answered from memory, read again in the background
    expect((await records.get('AC1'))?.friendlyName).toBe('one');
    expect(inner.reads()).toBe(2);
    await settle();
    now += 10_000; // past the first row's 30 s: the row read in the background answers
    expect((await records.get('AC1'))?.friendlyName).toBe('two');
    expect(inner.reads()).toBe(2);
  });

  it('a read under way when the account is forgotten is neither shared nor kept after it', async () => {
    const inner = rowStore();
    inner.rows.set('AC1', row('AC1', 'one'));
    const records = new AccountRecords(inner.store, {
      bus: null,
      logger: createLogger('silent'),
      now: () => 0,
    });
    let release = inner.hold();
    const before = records.get('AC1');
    // The row changes and its notice arrives while the first read is in flight.
    inner.rows.set('AC1', row('AC1', 'two'));
    records.forget('AC1');
    const after = records.get('AC1');
    expect(inner.reads()).toBe(2);
    release();
    expect((await before)?.friendlyName).toBe('one');
    expect((await after)?.friendlyName).toBe('two');
    expect((await records.get('AC1'))?.friendlyName).toBe('two');
    expect(inner.reads()).toBe(2);
    // Alone: the older read's row is returned to its caller, and the next get reads again.
    release = inner.hold();
    records.forget('AC1');
    const stale = records.get('AC1');
    inner.rows.set('AC1', row('AC1', 'three'));
    records.forget('AC1');
    release();
    expect((await stale)?.friendlyName).toBe('two');
    expect((await records.get('AC1'))?.friendlyName).toBe('three');
    expect(inner.reads()).toBe(4);
  });
});
