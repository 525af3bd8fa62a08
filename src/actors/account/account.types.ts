import type { AccountStatus } from '../../store/account-store.js';

/** Plain, serialisable context of an account actor. */
export interface AccountContext {
  readonly sid: string;
  /** Sid of the account whose suspension put this one in `suspended` (its own sid when direct). */
  readonly suspendedBy: string | null;
}

/**
 * Events of the account actor (spec §Account Status). `origin` is the account whose status change
 * cascades (the target of the REST update), so a reactivation restores exactly what it suspended.
 */
export type AccountEvent =
  | { type: 'account.passwordSet' }
  | { type: 'account.suspend'; origin: string }
  | { type: 'account.activate'; origin: string }
  | { type: 'account.close'; origin: string }
  | { type: 'account.modify' };

export interface AccountInput {
  readonly sid: string;
  readonly status: AccountStatus;
  readonly suspendedBy: string | null;
}
