/**
 * Account actor: the spec's Account Status table (§States and transitions).
 *
 *   uninitialized --passwordSet--> active
 *   uninitialized --close--------> closed
 *   active        --suspend------> suspended      (cascades to the sub-account tree)
 *   suspended     --activate-----> active         (restores what the same origin suspended)
 *   active|suspended --close-----> closed         (cascades; final: any modification is rejected)
 *
 * `account.modify` is accepted (a self-transition: XState's `can()` is false for targetless, actionless
 * transitions) in every non-final state: routes ask `can(modify)` before
 * changing FriendlyName or Password, so a closed account refuses every modification.
 * The REST status comes from the state's tag via `statusOf`.
 */
import { assign, type SnapshotFrom, setup } from 'xstate';
import type { AccountStatus } from '../../store/account-store.js';
import type { AccountContext, AccountEvent, AccountInput } from './account.types.js';

export const accountMachine = setup({
  types: {
    context: {} as AccountContext,
    events: {} as AccountEvent,
    input: {} as AccountInput,
    tags: {} as AccountStatus,
  },
  actions: {
    rememberSuspension: assign({
      suspendedBy: ({ event }) => (event.type === 'account.suspend' ? event.origin : null),
    }),
    forgetSuspension: assign({ suspendedBy: null }),
  },
}).createMachine({
  id: 'account',
  context: ({ input }) => ({ sid: input.sid, suspendedBy: input.suspendedBy }),
  initial: 'uninitialized',
  states: {
    uninitialized: {
      tags: 'uninitialized',
      on: {
        'account.passwordSet': { target: 'active' },
        'account.close': { target: 'closed' },
        'account.modify': { target: 'uninitialized' },
      },
    },
    active: {
      tags: 'active',
      on: {
        'account.suspend': { target: 'suspended', actions: 'rememberSuspension' },
        'account.close': { target: 'closed' },
        'account.passwordSet': { target: 'active' },
        'account.modify': { target: 'active' },
      },
    },
    suspended: {
      tags: 'suspended',
      on: {
        'account.activate': { target: 'active', actions: 'forgetSuspension' },
        'account.close': { target: 'closed', actions: 'forgetSuspension' },
        'account.passwordSet': { target: 'suspended' },
        'account.modify': { target: 'suspended' },
      },
    },
    closed: { tags: 'closed', type: 'final' },
  },
});

export type AccountSnapshot = SnapshotFrom<typeof accountMachine>;

/** The one mapping from actor state to the REST-visible status. */
export function statusOf(snapshot: AccountSnapshot): AccountStatus {
  for (const s of ['closed', 'suspended', 'active', 'uninitialized'] as const) {
    if (snapshot.hasTag(s)) return s;
  }
  throw new Error(`account actor in an untagged state: ${JSON.stringify(snapshot.value)}`);
}

/** A snapshot positioned at `input.status`, for accounts loaded from their Postgres row. */
export function snapshotAt(input: AccountInput): AccountSnapshot {
  return accountMachine.resolveState({
    value: input.status,
    context: { sid: input.sid, suspendedBy: input.suspendedBy },
  });
}
