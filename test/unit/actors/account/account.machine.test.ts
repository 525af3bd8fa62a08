import { describe, expect, it } from 'vitest';
import { AccountEffect, applyTransition } from '../../../../src/actors/account/account.machine.js';
import type { AccountEvent, AccountState } from '../../../../src/actors/account/account.types.js';
import { AccountStatus } from '../../../../src/store/account-store.js';

const at = (status: AccountStatus, suspendedBy: string | null = null): AccountState => ({
  sid: 'AC1',
  status,
  suspendedBy,
});

const EVENTS = {
  passwordSet: { type: 'account.passwordSet' },
  suspend: { type: 'account.suspend', origin: 'ACorigin' },
  activate: { type: 'account.activate', origin: 'ACorigin' },
  close: { type: 'account.close', origin: 'ACorigin' },
  modify: { type: 'account.modify' },
} as const satisfies Record<string, AccountEvent>;
type EventName = keyof typeof EVENTS;

const { Uninitialized, Active, Suspended, Closed } = AccountStatus;
const { SuspendSubAccounts, RestoreSubAccounts, CloseSubAccounts, ReleaseResources } = AccountEffect;

/**
 * The spec's Account Status table (§States and transitions) as (from, event) → next status and
 * effects; `null` = refused. Every pair of the 4 statuses and 5 events is listed, so a transition
 * added or lost in the machine fails here.
 */
const TABLE: Record<AccountStatus, Record<EventName, [AccountStatus, AccountEffect[]] | null>> = {
  [Uninitialized]: {
    passwordSet: [Active, []],
    suspend: null,
    activate: null,
    close: [Closed, [CloseSubAccounts, ReleaseResources]],
    modify: [Uninitialized, []],
  },
  [Active]: {
    passwordSet: [Active, []],
    suspend: [Suspended, [SuspendSubAccounts]],
    activate: null,
    close: [Closed, [CloseSubAccounts, ReleaseResources]],
    modify: [Active, []],
  },
  [Suspended]: {
    passwordSet: [Suspended, []],
    suspend: null,
    activate: [Active, [RestoreSubAccounts]],
    close: [Closed, [CloseSubAccounts, ReleaseResources]],
    modify: [Suspended, []],
  },
  [Closed]: { passwordSet: null, suspend: null, activate: null, close: null, modify: null },
};

describe('account status machine (spec §Account Status)', () => {
  for (const [from, row] of Object.entries(TABLE) as Array<[AccountStatus, (typeof TABLE)[AccountStatus]]>) {
    for (const [name, expected] of Object.entries(row) as Array<[EventName, (typeof row)[EventName]]>) {
      const suspendedBy = from === Suspended ? 'ACorigin' : null;
      it(`${from} + ${name} → ${expected ? expected[0] : 'refused'}`, () => {
        const result = applyTransition(at(from, suspendedBy), EVENTS[name]);
        expect(result.from).toBe(from);
        if (expected === null) {
          expect(result.allowed).toBe(false);
          return;
        }
        expect(result.allowed).toBe(true);
        if (!result.allowed) return;
        expect(result.next.status).toBe(expected[0]);
        expect(result.next.sid).toBe('AC1');
        expect([...result.effects].sort()).toEqual([...expected[1]].sort());
      });
    }
  }

  it('uninitialized is left by a Password, not by a Status update', () => {
    expect(applyTransition(at(Uninitialized), EVENTS.activate).allowed).toBe(false);
    expect(applyTransition(at(Uninitialized), EVENTS.suspend).allowed).toBe(false);
    const set = applyTransition(at(Uninitialized), EVENTS.passwordSet);
    expect(set.allowed && set.next.status).toBe(Active);
  });

  it('active ⇄ suspended remembers who suspended it, and forgets on reactivation', () => {
    const suspended = applyTransition(at(Active), { type: 'account.suspend', origin: 'ACparent' });
    if (!suspended.allowed) throw new Error('suspend refused');
    expect(suspended.next).toEqual({ sid: 'AC1', status: Suspended, suspendedBy: 'ACparent' });
    const back = applyTransition(suspended.next, { type: 'account.activate', origin: 'ACparent' });
    if (!back.allowed) throw new Error('activate refused');
    expect(back.next).toEqual({ sid: 'AC1', status: Active, suspendedBy: null });
  });

  it('a password change keeps a suspension and who made it', () => {
    const r = applyTransition(at(Suspended, 'ACparent'), EVENTS.passwordSet);
    expect(r.allowed && r.next).toEqual({ sid: 'AC1', status: Suspended, suspendedBy: 'ACparent' });
  });

  it('closing clears the suspension: a closed account is no longer anyone’s to restore', () => {
    for (const from of [Uninitialized, Active, Suspended]) {
      const r = applyTransition(at(from, from === Suspended ? 'ACparent' : null), EVENTS.close);
      expect(r.allowed && r.next).toEqual({ sid: 'AC1', status: Closed, suspendedBy: null });
    }
  });

  it('closed is final: every event is refused, modification included', () => {
    for (const ev of Object.values(EVENTS)) {
      expect(applyTransition(at(Closed), ev)).toEqual({ allowed: false, from: Closed });
    }
  });

  it('is pure: the same row gives the same answer and is left as it was', () => {
    const row = at(Active);
    const copy = { ...row };
    const first = applyTransition(row, EVENTS.suspend);
    const second = applyTransition(row, EVENTS.suspend);
    expect(second).toEqual(first);
    expect(row).toEqual(copy);
  });
});
