/**
 * Route table: each resource path lists its methods once. Unsupported methods get 405 with `Allow`;
 * authenticated routes resolve the caller (HTTP Basic, spec §Authentication) and, for account-scoped
 * paths (`/2012-04-24/Accounts/:accountSid/...`), the target account within the caller's scope.
 * The table is exported so tests can generate matrices (isolation, 405) from it.
 */
import type { Request, Response } from 'express';
import type { AccountService } from '../actors/account/account-service.js';
import { AppError } from '../errors.js';
import { type Account, AccountStatus } from '../store/account-store.js';
import { state } from './context.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
export type Handler = (req: Request, res: Response) => Promise<void> | void;

export interface RouteOptions {
  /** Default true. */
  readonly auth?: boolean;
  /** Lets a non-active caller through when it returns true (the uninitialized admin's password change). */
  readonly allowInactive?: (req: Request, res: Response, caller: Account) => boolean;
}

export interface RouteEntry {
  readonly path: string;
  readonly methods: readonly Method[];
  readonly auth: boolean;
  readonly accountScoped: boolean;
}

export const REALM = 'Switchboard';

export class RouteTable {
  readonly entries: RouteEntry[] = [];

  constructor(
    private readonly router: {
      all(path: string, handler: (req: Request, res: Response) => Promise<void>): unknown;
    },
    private readonly accounts: AccountService,
  ) {}

  resource(path: string, handlers: Partial<Record<Method, Handler>>, options: RouteOptions = {}): void {
    const methods = Object.keys(handlers) as Method[];
    const auth = options.auth ?? true;
    const accountScoped = path.includes(':accountSid');
    this.entries.push({ path, methods, auth, accountScoped });
    const allow = [...methods, ...(methods.includes('GET') ? ['HEAD'] : [])].join(', ');
    this.router.all(path, async (req, res) => {
      const handler = handlers[req.method as Method] ?? (req.method === 'HEAD' ? handlers.GET : undefined);
      if (!handler) {
        throw new AppError('MethodNotAllowed', `${req.method} is not supported on this resource`, {
          headers: { Allow: allow },
        });
      }
      if (auth) {
        const caller = await this.authenticate(req);
        if (caller.status !== AccountStatus.Active && !options.allowInactive?.(req, res, caller)) {
          throw new AppError('AccountNotActive', `Account ${caller.sid} is ${caller.status}`);
        }
        state(res).caller = caller;
        if (accountScoped)
          state(res).account = await this.targetAccount(caller, req.params.accountSid as string);
      }
      await handler(req, res);
    });
  }

  private async authenticate(req: Request): Promise<Account> {
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
    const account = await this.accounts.authenticate(user, decoded.slice(colon + 1));
    if (!account) throw new AppError('Unauthenticated', 'Invalid credentials', challenge);
    return account;
  }

  /** The account named in the path if the caller may act on it; 404 otherwise (never reveals others). */
  private async targetAccount(caller: Account, sidOrEmail: string): Promise<Account> {
    const target = await this.accounts.resolve(sidOrEmail);
    if (!target || !(await this.accounts.inScope(caller, target))) {
      throw new AppError('NotFound', `Account ${sidOrEmail} not found`);
    }
    return target;
  }
}
