/**
 * Account status machine: the spec's Account Status table (§States and transitions), used as a pure
 * function. An account is a Postgres row; there is no live actor per account and nothing is kept
 * between requests: `applyTransition` positions the machine at the row's status, asks it whether the
 * requested change is allowed, and returns the next status with the effects that follow.
 *
 *   uninitialized --passwordSet--> active
 *   uninitialized --close--------> closed         (releases what the account owns)
 *   active        --suspend------> suspended      (cascades to the sub-account tree)
 *   suspended     --activate-----> active         (restores what the same origin suspended)
 *   active|suspended --close-----> closed         (cascades; releases; final: any modification is refused)
 *
 * `account.modify` is accepted (a self-transition: XState's `can()` is false for targetless, actionless
 * transitions) in every non-final state, so a closed account refuses every modification.
 * The REST status comes from the state's tag via `statusOf`.
 */
import { assign, type SnapshotFrom, setup, transition } from 'xstate';
import type { AccountStatus } from '../../store/account-store.js';
import type { AccountContext, AccountEvent, AccountState } from './account.types.js';

/**
 * What a transition obliges the caller to do besides writing the new status. The machine only names
 * them (its actions do nothing); account-cascade.ts carries them out, so the machine stays pure.
 */
export const AccountEffect = {
  /** Suspend every active account of the sub-account tree, remembering the origin. */
  SuspendSubAccounts: 'suspendSubAccounts',
  /** Reactivate the sub-accounts that this origin's suspension suspended. */
  RestoreSubAccounts: 'restoreSubAccounts',
  /** Close every account of the sub-account tree that is not closed yet. */
  CloseSubAccounts: 'closeSubAccounts',
  /** Delete what the account owns (numbers, clients, applications), spec: "most resources deleted". */
  ReleaseResources: 'releaseResources',
} as const;
export type AccountEffect = (typeof AccountEffect)[keyof typeof AccountEffect];
const EFFECTS: readonly string[] = Object.values(AccountEffect);

/** Effect actions only name what the caller must do: the machine itself performs nothing. */
const namedOnly = () => {};

/** Closing, from any open state: a closed account is no longer anyone's suspension. */
const CLOSE = ['forgetSuspension', 'closeSubAccounts', 'releaseResources'] as const;

export const accountMachine = setup({
  types: {
    context: {} as AccountContext,
    events: {} as AccountEvent,
    input: {} as AccountState,
    tags: {} as AccountStatus,
  },
  actions: {
    rememberSuspension: assign({
      suspendedBy: ({ event }) => (event.type === 'account.suspend' ? event.origin : null),
    }),
    forgetSuspension: assign({ suspendedBy: null }),
    [AccountEffect.SuspendSubAccounts]: namedOnly,
    [AccountEffect.RestoreSubAccounts]: namedOnly,
    [AccountEffect.CloseSubAccounts]: namedOnly,
    [AccountEffect.ReleaseResources]: namedOnly,
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
        'account.close': { target: 'closed', actions: CLOSE },
        'account.modify': { target: 'uninitialized' },
      },
    },
    active: {
      tags: 'active',
      on: {
        'account.suspend': { target: 'suspended', actions: ['rememberSuspension', 'suspendSubAccounts'] },
        'account.close': { target: 'closed', actions: CLOSE },
        'account.passwordSet': { target: 'active' },
        'account.modify': { target: 'active' },
      },
    },
    suspended: {
      tags: 'suspended',
      on: {
        'account.activate': { target: 'active', actions: ['forgetSuspension', 'restoreSubAccounts'] },
        'account.close': { target: 'closed', actions: CLOSE },
        'account.passwordSet': { target: 'suspended' },
        'account.modify': { target: 'suspended' },
      },
    },
    closed: { tags: 'closed', type: 'final' },
  },
});

export type AccountSnapshot = SnapshotFrom<typeof accountMachine>;

/** The one mapping from machine state to the REST-visible status. */
export function statusOf(snapshot: AccountSnapshot): AccountStatus {
  for (const s of ['closed', 'suspended', 'active', 'uninitialized'] as const) {
    if (snapshot.hasTag(s)) return s;
  }
  throw new Error(`account machine in an untagged state: ${JSON.stringify(snapshot.value)}`);
}

/** The machine positioned at an account row's status. */
export function snapshotAt(state: AccountState): AccountSnapshot {
  return accountMachine.resolveState({
    value: state.status,
    context: { sid: state.sid, suspendedBy: state.suspendedBy },
  });
}

/** The outcome of asking for a transition: refused, or the state it leads to and what must follow. */
export type AccountTransition =
  | { readonly allowed: false; readonly from: AccountStatus }
  | {
      readonly allowed: true;
      readonly from: AccountStatus;
      readonly next: AccountState;
      readonly effects: readonly AccountEffect[];
    };

/**
 * Validates and applies `event` to an account at `current` (its row), without side effects. A refused
 * event leaves nothing changed; an allowed one gives the next status and `suspendedBy` to write and
 * the effects (cascade, release) the caller must carry out.
 */
export function applyTransition(current: AccountState, event: AccountEvent): AccountTransition {
  const before = snapshotAt(current);
  if (!before.can(event)) return { allowed: false, from: current.status };
  const [after, actions] = transition(accountMachine, before, event);
  return {
    allowed: true,
    from: current.status,
    next: { sid: current.sid, status: statusOf(after), suspendedBy: after.context.suspendedBy },
    effects: actions.map((a) => a.type).filter(isEffect),
  };
}

function isEffect(name: string): name is AccountEffect {
  return EFFECTS.includes(name);
}
