import { describe, expect, it, vi } from 'vitest';
import { AccountCascade } from '../../../../src/actors/account/account-cascade.js';
import { AccountRecords } from '../../../../src/actors/account/account-records.js';
import { AppError } from '../../../../src/errors.js';
import { createLogger } from '../../../../src/logger.js';
import {
  type Account,
  type AccountStatus,
  type AccountStore,
  Role,
} from '../../../../src/store/account-store.js';

/** A tree in memory: only the reads the cascade makes (it never writes: the service does). */
function world(
  rows: Array<[sid: string, parent: string | null, status: AccountStatus, suspendedBy?: string]>,
) {
  const at = new Date(0);
  const accounts: Account[] = rows.map(([sid, parentSid, status, suspendedBy], i) => ({
    sid,
    parentSid,
    organizationSid: 'OR1',
    emailAddress: `${sid.toLowerCase()}@example.test`,
    friendlyName: sid,
    type: 'Full',
    status,
    suspendedBy: suspendedBy ?? null,
    role: Role.Administrator,
    isSuperAdmin: i === 0,
    authToken: 'x',
    passwordHash: 'x',
    dateCreated: at,
    dateUpdated: at,
  }));
  const bySid = (sid: string) => accounts.find((a) => a.sid === sid) ?? null;
  const descendants = (sid: string): Account[] =>
    accounts.filter((a) => a.parentSid === sid).flatMap((a) => [a, ...descendants(a.sid)]);
  const listDescendants = vi.fn(async (sid: string) => descendants(sid));
  const store = {
    findBySid: async (sid: string) => bySid(sid),
    listDescendants,
  } as Partial<AccountStore> as AccountStore;
  const logger = createLogger('silent');
  const records = new AccountRecords(store, { bus: null, logger, now: () => 0 });
  const cascade = new AccountCascade(records, logger);
  const account = (sid: string): Account => {
    const a = bySid(sid);
    if (!a) throw new Error(`no ${sid}`);
    return a;
  };
  return { cascade, account, listDescendants, logger };
}

describe('account cascade (spec §Account Status)', () => {
  it('suspending suspends the active descendants only, remembering the origin', async () => {
    const w = world([
      ['SA', null, 'active'],
      ['P', 'SA', 'active'],
      ['C', 'P', 'active'],
      ['U', 'P', 'uninitialized'],
      ['S', 'P', 'suspended', 'S'],
      ['X', 'P', 'closed'],
      ['G', 'C', 'active'],
    ]);
    const change = await w.cascade.plan(w.account('P'), { passwordSet: false, status: 'suspended' });
    expect(change.own).toEqual({ sid: 'P', status: 'suspended', suspendedBy: 'P' });
    expect(change.descendants).toEqual([
      {
        sid: 'C',
        patch: { status: 'suspended', suspendedBy: 'P' },
        expect: { status: 'active', suspendedBy: null },
      },
      {
        sid: 'G',
        patch: { status: 'suspended', suspendedBy: 'P' },
        expect: { status: 'active', suspendedBy: null },
      },
    ]);
    expect(change.released).toEqual([]);
  });

  it('reactivating restores exactly what the same origin suspended', async () => {
    const w = world([
      ['SA', null, 'active'],
      ['P', 'SA', 'suspended', 'P'],
      ['C', 'P', 'suspended', 'P'],
      ['S', 'P', 'suspended', 'S'],
    ]);
    const change = await w.cascade.plan(w.account('P'), { passwordSet: false, status: 'active' });
    expect(change.own).toEqual({ sid: 'P', status: 'active', suspendedBy: null });
    expect(change.descendants.map((d) => [d.sid, d.patch])).toEqual([
      ['C', { status: 'active', suspendedBy: null }],
    ]);
  });

  it('refuses to reactivate under a parent that is not active (409)', async () => {
    const w = world([
      ['SA', null, 'active'],
      ['P', 'SA', 'suspended', 'P'],
      ['C', 'P', 'suspended', 'P'],
    ]);
    const err = await w.cascade
      .plan(w.account('C'), { passwordSet: false, status: 'active' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(409);
    expect((err as AppError).message).toMatch(/parent is suspended/);
  });

  it('closing closes every open descendant and releases each closed account, target first', async () => {
    const w = world([
      ['SA', null, 'active'],
      ['P', 'SA', 'suspended', 'P'],
      ['C', 'P', 'suspended', 'P'],
      ['U', 'P', 'uninitialized'],
      ['X', 'P', 'closed'],
    ]);
    const change = await w.cascade.plan(w.account('P'), { passwordSet: false, status: 'closed' });
    expect(change.own).toEqual({ sid: 'P', status: 'closed', suspendedBy: null });
    expect(change.descendants.map((d) => [d.sid, d.patch])).toEqual([
      ['C', { status: 'closed', suspendedBy: null }],
      ['U', { status: 'closed', suspendedBy: null }],
    ]);
    expect(change.released).toEqual(['P', 'C', 'U']);
  });

  it('a transition the machine refuses is a 409 naming it; the tree is not even read', async () => {
    const w = world([
      ['SA', null, 'active'],
      ['U', 'SA', 'uninitialized'],
    ]);
    const err = await w.cascade
      .plan(w.account('U'), { passwordSet: false, status: 'suspended' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(409);
    expect((err as AppError).message).toMatch(/cannot go from uninitialized with account\.suspend/);
    expect(w.listDescendants).not.toHaveBeenCalled();
  });

  it('a Password activates an uninitialized account and touches nothing else', async () => {
    const w = world([
      ['SA', null, 'uninitialized'],
      ['C', 'SA', 'active'],
    ]);
    const change = await w.cascade.plan(w.account('SA'), { passwordSet: true });
    expect(change).toEqual({
      own: { sid: 'SA', status: 'active', suspendedBy: null },
      descendants: [],
      released: [],
    });
    const same = await w.cascade.plan(w.account('C'), { passwordSet: true });
    expect(same.own).toEqual({ sid: 'C', status: 'active', suspendedBy: null });
    expect(w.listDescendants).not.toHaveBeenCalled();
  });

  it('release tells every listener about every account, past a failing listener', async () => {
    const w = world([['SA', null, 'active']]);
    const seen: string[] = [];
    const error = vi.spyOn(w.logger, 'error');
    w.cascade.onClosed((sid) => {
      if (sid === 'A') throw new Error('boom');
      seen.push(`first:${sid}`);
    });
    w.cascade.onClosed(async (sid) => {
      seen.push(`second:${sid}`);
    });
    await w.cascade.release(['A', 'B']);
    expect(seen).toEqual(['second:A', 'first:B', 'second:B']);
    expect(error).toHaveBeenCalledTimes(1);
  });
});
