/**
 * Status changes of an account and what follows for its sub-account tree (spec §Account Status):
 * suspending suspends every active descendant and remembers the origin; reactivating restores
 * exactly what that origin suspended; closing closes the whole tree and releases what each closed
 * account owns (numbers, clients, applications: the listeners are wired in src/server.ts). Calls in
 * progress are not ended here; new traffic of a non-active account is refused where it enters (REST
 * authentication, the SIP registrar, inbound routing).
 *
 * Every transition is decided by the status machine (account.machine.ts) from the rows as read;
 * nothing is written until the whole tree's change has been validated.
 */
import { AppError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { type Account, AccountStatus, type AccountUpdate } from '../../store/account-store.js';
import { AccountEffect, applyTransition } from './account.machine.js';
import type { AccountEvent, AccountState } from './account.types.js';
import type { AccountRecords } from './account-records.js';

/** Listeners told when an account is closed (so what it owns — numbers, clients — can be released). */
export type ClosedListener = (accountSid: string) => Promise<void> | void;

/** A validated status change, ready to be written in one transaction. */
export interface StatusChange {
  /** The target's status and suspension after the change (unchanged when nothing was asked). */
  readonly own: AccountState;
  /** The sub-accounts the change cascades to: what to write on each, and the row it was decided from. */
  readonly descendants: readonly AccountUpdate[];
  /** Accounts to release once the change is written: the closed ones, target first. */
  readonly released: readonly string[];
}

/** What the REST update asks of the status: a Password (activates `uninitialized`) and/or a Status. */
export interface StatusRequest {
  readonly passwordSet: boolean;
  readonly status?: AccountStatus | undefined;
}

export class AccountCascade {
  private readonly closedListeners: ClosedListener[] = [];

  constructor(
    private readonly records: AccountRecords,
    private readonly logger: Logger,
  ) {}

  onClosed(listener: ClosedListener): void {
    this.closedListeners.push(listener);
  }

  /** Validates `request` on `target` and its tree; throws 409 Conflict when a transition is refused. */
  async plan(target: Account, request: StatusRequest): Promise<StatusChange> {
    const events: AccountEvent[] = [];
    if (request.passwordSet && target.status === AccountStatus.Uninitialized) {
      events.push({ type: 'account.passwordSet' });
    }
    if (request.status !== undefined && request.status !== target.status) {
      if (request.status === AccountStatus.Active) await this.requireActiveParent(target);
      events.push(statusEvent(request.status, target.sid));
    }

    let own: AccountState = { sid: target.sid, status: target.status, suspendedBy: target.suspendedBy };
    const effects: AccountEffect[] = [];
    for (const event of events) {
      const step = applyTransition(own, event);
      if (!step.allowed) {
        throw new AppError(
          'Conflict',
          `Account ${target.sid} cannot go from ${step.from} with ${event.type}`,
        );
      }
      own = step.next;
      effects.push(...step.effects);
    }

    const released: string[] = effects.includes(AccountEffect.ReleaseResources) ? [target.sid] : [];
    const tree = cascadeOf(effects, target.sid);
    if (!tree) return { own, descendants: [], released };
    const descendants: AccountUpdate[] = [];
    for (const d of await this.records.descendants(target.sid)) {
      if (tree.only && !tree.only(d)) continue;
      const step = applyTransition(d, tree.event);
      // A descendant the event does not apply to keeps its status (already suspended by someone
      // else, already closed, still uninitialized...). Its own cascade effects are covered because
      // the whole tree is walked here; only the release is per account.
      if (!step.allowed) continue;
      descendants.push({
        sid: d.sid,
        patch: { status: step.next.status, suspendedBy: step.next.suspendedBy },
        expect: { status: d.status, suspendedBy: d.suspendedBy },
      });
      if (step.effects.includes(AccountEffect.ReleaseResources)) released.push(d.sid);
    }
    return { own, descendants, released };
  }

  /** Tells the closed listeners, one account at a time; a failing listener is logged, not fatal. */
  async release(sids: readonly string[]): Promise<void> {
    for (const sid of sids) {
      for (const listener of this.closedListeners) {
        try {
          await listener(sid);
        } catch (e) {
          this.logger.error({ err: e, accountSid: sid }, 'account-closed listener failed');
        }
      }
    }
  }

  /** An account cannot be reactivated under a parent that is not active (docs/decisions.md). */
  private async requireActiveParent(target: Account): Promise<void> {
    if (!target.parentSid) return;
    const parent = await this.records.get(target.parentSid);
    if (parent && parent.status !== AccountStatus.Active) {
      throw new AppError(
        'Conflict',
        `Account ${target.sid} cannot be activated while its parent is ${parent.status}`,
      );
    }
  }
}

function statusEvent(status: AccountStatus, origin: string): AccountEvent {
  switch (status) {
    case AccountStatus.Suspended:
      return { type: 'account.suspend', origin };
    case AccountStatus.Closed:
      return { type: 'account.close', origin };
    case AccountStatus.Active:
      return { type: 'account.activate', origin };
    case AccountStatus.Uninitialized:
      // parseSettableStatus never yields it: an account only leaves uninitialized by a Password.
      throw new AppError('InvalidParameter', 'Status cannot be set to uninitialized');
  }
}

/** The event the tree receives for the target's effects, and which descendants it is meant for. */
function cascadeOf(
  effects: readonly AccountEffect[],
  origin: string,
): { event: AccountEvent; only?: (d: Account) => boolean } | null {
  if (effects.includes(AccountEffect.CloseSubAccounts)) return { event: { type: 'account.close', origin } };
  if (effects.includes(AccountEffect.SuspendSubAccounts))
    return { event: { type: 'account.suspend', origin } };
  if (effects.includes(AccountEffect.RestoreSubAccounts)) {
    return { event: { type: 'account.activate', origin }, only: (d) => d.suspendedBy === origin };
  }
  return null;
}
