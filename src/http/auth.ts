/**
 * Who is calling (HTTP Basic, spec §Authentication) and which account the path names, within the
 * caller's scope. One implementation for the REST routes and the supervisor stream's upgrade.
 */
import type { IncomingMessage } from 'node:http';
import type { AccountService } from '../actors/account/account-service.js';
import { AppError } from '../errors.js';
import type { Account } from '../store/account-store.js';

export const REALM = 'Switchboard';

interface BasicCredentials {
  readonly user: string;
  readonly secret: string;
}

/**
 * The last Authorization header each connection sent, decoded. A keep-alive client sends the same
 * header on every request, so it is parsed once per connection. Only a connection's own earlier
 * header is ever compared with what it presents, so the (not constant-time) string comparison
 * tells a client nothing it did not send itself.
 */
const parsedBySocket = new WeakMap<
  object,
  { readonly header: string; readonly credentials: BasicCredentials }
>();

const MALFORMED = 'Malformed Basic credentials';

/** `Basic base64(user:secret)` → user (URL-decoded) and secret, or the 401's message. */
function parseBasic(header: string): BasicCredentials | string {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!m) return 'HTTP Basic credentials are required';
  const decoded = Buffer.from(m[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return MALFORMED;
  let user: string;
  try {
    user = decodeURIComponent(decoded.slice(0, colon));
  } catch {
    return MALFORMED;
  }
  // NUL cannot be part of a sid or an email address, and must not reach the account store.
  if (user.includes('\u0000')) return MALFORMED;
  return { user, secret: decoded.slice(colon + 1) };
}

/** The account whose Basic credentials the request carries; 401 (with the challenge) otherwise. */
export async function authenticateBasic(accounts: AccountService, req: IncomingMessage): Promise<Account> {
  const header = req.headers.authorization;
  if (!header) throw unauthenticated('HTTP Basic credentials are required');
  const socket = req.socket;
  const seen = parsedBySocket.get(socket);
  let credentials: BasicCredentials;
  if (seen !== undefined && seen.header === header) {
    credentials = seen.credentials;
  } else {
    const parsed = parseBasic(header);
    if (typeof parsed === 'string') throw unauthenticated(parsed);
    credentials = parsed;
    parsedBySocket.set(socket, { header, credentials });
  }
  const source = socket.remoteAddress ?? 'unknown';
  const account = await accounts.authenticate(credentials.user, credentials.secret, source);
  if (!account) throw unauthenticated('Invalid credentials');
  return account;
}

function unauthenticated(message: string): AppError {
  return new AppError('Unauthenticated', message, {
    headers: { 'WWW-Authenticate': `Basic realm="${REALM}"` },
  });
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
