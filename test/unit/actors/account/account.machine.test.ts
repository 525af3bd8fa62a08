import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { accountMachine, snapshotAt, statusOf } from '../../../../src/actors/account/account.machine.js';

const start = (
  status: 'uninitialized' | 'active' | 'suspended' | 'closed',
  suspendedBy: string | null = null,
) =>
  createActor(accountMachine, {
    input: { sid: 'AC1', status, suspendedBy },
    snapshot: snapshotAt({ sid: 'AC1', status, suspendedBy }),
  }).start();

describe('account machine (spec §Account Status)', () => {
  it('uninitialized → active when the password is set', () => {
    const a = start('uninitialized');
    expect(a.getSnapshot().can({ type: 'account.suspend', origin: 'X' })).toBe(false);
    a.send({ type: 'account.passwordSet' });
    expect(statusOf(a.getSnapshot())).toBe('active');
  });

  it('active ⇄ suspended remembers who suspended it', () => {
    const a = start('active');
    a.send({ type: 'account.suspend', origin: 'ACparent' });
    expect(statusOf(a.getSnapshot())).toBe('suspended');
    expect(a.getSnapshot().context.suspendedBy).toBe('ACparent');
    a.send({ type: 'account.activate', origin: 'ACparent' });
    expect(statusOf(a.getSnapshot())).toBe('active');
    expect(a.getSnapshot().context.suspendedBy).toBeNull();
  });

  it('closed is final: nothing is accepted any more', () => {
    const a = start('suspended', 'AC1');
    a.send({ type: 'account.close', origin: 'AC1' });
    const snap = a.getSnapshot();
    expect(statusOf(snap)).toBe('closed');
    expect(snap.status).toBe('done');
    for (const ev of [
      { type: 'account.modify' },
      { type: 'account.passwordSet' },
      { type: 'account.activate', origin: 'AC1' },
    ] as const) {
      expect(snap.can(ev)).toBe(false);
    }
  });

  it('modify is allowed in every state but closed', () => {
    for (const s of ['uninitialized', 'active', 'suspended'] as const) {
      expect(start(s).getSnapshot().can({ type: 'account.modify' })).toBe(true);
    }
    expect(start('closed').getSnapshot().can({ type: 'account.modify' })).toBe(false);
  });

  it('round-trips through the persisted snapshot', () => {
    const a = start('active');
    a.send({ type: 'account.suspend', origin: 'ACx' });
    const persisted = JSON.parse(JSON.stringify(a.getPersistedSnapshot()));
    const b = createActor(accountMachine, { input: undefined as never, snapshot: persisted }).start();
    expect(statusOf(b.getSnapshot())).toBe('suspended');
    expect(b.getSnapshot().context.suspendedBy).toBe('ACx');
  });
});
