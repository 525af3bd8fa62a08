import type { AccountStatus } from '../../store/account-store.js';

/** Plain context of the account status machine: what of the row the transitions read or change. */
export interface AccountContext {
  readonly sid: string;
  /** Sid of the account whose suspension put this one in `suspended` (its own sid when direct). */
  readonly suspendedBy: string | null;
}

/**
 * Events of the account status machine (spec §Account Status). `origin` is the account whose status
 * change cascades (the target of the REST update), so a reactivation restores exactly what it suspended.
 */
export type AccountEvent =
  | { type: 'account.passwordSet' }
  | { type: 'account.suspend'; origin: string }
  | { type: 'account.activate'; origin: string }
  | { type: 'account.close'; origin: string }
  | { type: 'account.modify' };

/** The status-bearing part of an account row: what the machine is positioned at and what it yields. */
export interface AccountState {
  readonly sid: string;
  readonly status: AccountStatus;
  readonly suspendedBy: string | null;
}
