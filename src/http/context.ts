/** Typed per-request state kept in `res.locals`. */
import type { Response } from 'express';
import type { Account } from '../store/account-store.js';
import type { Format, JsonDialect } from './render.js';

export interface RequestState {
  format: Format;
  /** The authenticated account (set by the router for authenticated routes). */
  caller?: Account;
  /** The account named by `:accountSid` in the path, within the caller's scope. */
  account?: Account;
  /** Form parameters of the body (see params.ts). */
  form?: FormParams;
  /** Set when the request came in on another API surface that reshapes the JSON (see render.ts). */
  dialect?: JsonDialect;
}

export type FormParams = ReadonlyMap<string, readonly string[]>;

export function state(res: Response): RequestState {
  return res.locals as RequestState;
}

export function formatOf(res: Response): Format {
  return state(res).format ?? 'xml';
}

export function callerOf(res: Response): Account {
  const caller = state(res).caller;
  if (!caller) throw new Error('route needs authentication but no caller is set');
  return caller;
}

export function accountOf(res: Response): Account {
  const account = state(res).account;
  if (!account) throw new Error('route is not account-scoped');
  return account;
}
