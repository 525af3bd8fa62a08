/**
 * Who is calling (HTTP Basic, spec §Authentication) and which account the path names, within the
 * caller's scope. One implementation for the REST routes and the supervisor stream's upgrade.
 */
import type { IncomingMessage } from 'node:http';
import type { AccountService } from '../actors/account/account-service.js';
import { AppError } from '../errors.js';
import type { Account } from '../store/account-store.js';

export const REALM = 'Switchboard';

/** The account whose Basic credentials the request carries; 401 (with the challenge) otherwise. */
export async function authenticateBasic(accounts: AccountService, req: IncomingMessage): Promise<Account> {
  const challenge = { headers: { 'WWW-Authenticate': `Basic realm="${REALM}"` } };
  const header = req.headers.authorization;
  const m = header ? /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header) : null;
  if (!m) throw new AppError('Unauthenticated', 'HTTP Basic credentials are required', challenge);
  const decoded = Buffer.from(m[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) throw new AppError('Unauthenticated', 'Malformed Basic credentials', challenge);
  let user = decoded.slice(0, colon);
  try {
    user = decodeURIComponent(user);
  } catch {
    throw new AppError('Unauthenticated', 'Malformed Basic credentials', challenge);
  }
  // NUL cannot be part of a sid or an email address, and must not reach the account store.
  if (user.includes('\u0000'))
    throw new AppError('Unauthenticated', 'Malformed Basic credentials', challenge);
  const source = req.socket.remoteAddress ?? 'unknown';
  const account = await accounts.authenticate(user, decoded.slice(colon + 1), source);
  if (!account) throw new AppError('Unauthenticated', 'Invalid credentials', challenge);
  return account;
}

/** The account named in the path if the caller may act on it; 404 otherwise (never reveals others). */
export async function targetAccount(
  accounts: AccountService,
  caller: Account,
  sidOrEmail: string,
): Promise<Account> {
  const target = await accounts.resolve(sidOrEmail);
  if (!target || !(await accounts.inScope(caller, target))) {
    throw new AppError('NotFound', `Account ${sidOrEmail} not found`);
  }
  return target;
}
