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
import { authenticateBasic, targetAccount } from './auth.js';
import { state } from './context.js';
import type { OperationSpec, RouteSpec } from './openapi/spec.js';
import { refuseNul } from './params.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
export type Handler = (req: Request, res: Response) => Promise<void> | void;

export interface RouteOptions {
  /** Default true. */
  readonly auth?: boolean;
  /** Serves the request without authentication when it returns true (recording audio, spec §Authentication 2). */
  readonly publicWhen?: (req: Request) => boolean;
  /** Lets a non-active caller through when it returns true (the uninitialized admin's password change). */
  readonly allowInactive?: (req: Request, res: Response, caller: Account) => boolean;
  /**
   * What each method takes and answers (openapi/spec.ts): the router refuses a request missing a
   * declared required member, and the OpenAPI document is generated from it.
   */
  readonly spec?: RouteSpec;
}

export interface RouteEntry {
  readonly path: string;
  readonly methods: readonly Method[];
  readonly auth: boolean;
  readonly accountScoped: boolean;
  /** Set by RouteOptions.spec or describe(). */
  spec?: RouteSpec | undefined;
}

interface CompiledRoute {
  readonly entry: RouteEntry;
  readonly segments: readonly string[];
  readonly run: (req: Request, res: Response) => Promise<void>;
}

/**
 * Matches a path template (`/2012-04-24/Accounts/:accountSid/Calls`) segment by segment; static
 * segments win over parameters when several templates match (so `/Accounts/migrate/:sid` beats
 * `/Accounts/:accountSid/Calls`). Returns decoded params or null.
 */
function matchSegments(template: readonly string[], path: readonly string[]): Record<string, string> | null {
  if (template.length !== path.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < template.length; i++) {
    const t = template[i] as string;
    const p = path[i] as string;
    if (t.charCodeAt(0) === 58 /* : */) {
      if (p === '') return null;
      try {
        params[t.slice(1)] = decodeURIComponent(p);
      } catch {
        return null;
      }
    } else if (t !== p) {
      return null;
    }
  }
  return params;
}

/**
 * 400 MissingParameter naming the first declared required member that is absent (query parameters
 * for GET/DELETE, form members otherwise). Present-but-empty values are left to the handler, which
 * knows whether '' clears a member or is invalid.
 */
function checkRequired(op: OperationSpec | undefined, req: Request, res: Response): void {
  if (!op?.params || op.jsonBody) return;
  const fromQuery = req.method === 'GET' || req.method === 'HEAD' || req.method === 'DELETE';
  for (const p of op.params) {
    if (p.required !== true) continue;
    const present = fromQuery ? req.query[p.name] !== undefined : state(res).form?.has(p.name) === true;
    if (!present) throw new AppError('MissingParameter', `${p.name} is required`);
  }
}

/** Path and query parameters holding NUL are a 400 naming them before any store sees them. */
function refuseNulInRequest(params: Record<string, string>, query: Request['query'] | undefined): void {
  for (const [name, value] of Object.entries(params)) refuseNul(name, value);
  for (const [name, value] of Object.entries(query ?? {})) {
    for (const v of Array.isArray(value) ? value : [value]) if (typeof v === 'string') refuseNul(name, v);
  }
}

export class RouteTable {
  readonly entries: RouteEntry[] = [];
  /** Routes grouped by segment count; within a group, templates with more static segments first. */
  private readonly bySize = new Map<number, CompiledRoute[]>();

  constructor(private readonly accounts: AccountService) {}

  resource(path: string, handlers: Partial<Record<Method, Handler>>, options: RouteOptions = {}): void {
    const methods = Object.keys(handlers) as Method[];
    const auth = options.auth ?? true;
    const accountScoped = path.includes(':accountSid');
    const entry: RouteEntry = { path, methods, auth, accountScoped, spec: options.spec };
    this.entries.push(entry);
    const allow = [...methods, ...(methods.includes('GET') ? ['HEAD'] : [])].join(', ');
    const run = async (req: Request, res: Response) => {
      const handler = handlers[req.method as Method] ?? (req.method === 'HEAD' ? handlers.GET : undefined);
      if (!handler) {
        throw new AppError('MethodNotAllowed', `${req.method} is not supported on this resource`, {
          headers: { Allow: allow },
        });
      }
      if (auth && !options.publicWhen?.(req)) {
        const caller = await authenticateBasic(this.accounts, req);
        if (caller.status !== AccountStatus.Active && !options.allowInactive?.(req, res, caller)) {
          throw new AppError('AccountNotActive', `Account ${caller.sid} is ${caller.status}`);
        }
        state(res).caller = caller;
        if (accountScoped)
          state(res).account = await targetAccount(this.accounts, caller, req.params.accountSid as string);
      }
      checkRequired(entry.spec?.[req.method === 'HEAD' ? 'GET' : (req.method as Method)], req, res);
      await handler(req, res);
    };
    const segments = path.split('/');
    const group = this.bySize.get(segments.length) ?? [];
    group.push({ entry, segments, run });
    const statics = (r: CompiledRoute) => r.segments.filter((s) => !s.startsWith(':')).length;
    group.sort((a, b) => statics(b) - statics(a));
    this.bySize.set(segments.length, group);
  }

  /**
   * Attaches the declaration of a registered path (same as RouteOptions.spec), for route files that
   * declare their operations apart from the handlers. An unknown path or a method the path does not
   * serve is a programming error.
   */
  describe(path: string, spec: RouteSpec): void {
    const entry = this.entries.find((e) => e.path === path);
    if (!entry) throw new Error(`describe: no route ${path}`);
    for (const m of ['GET', 'POST', 'PUT', 'DELETE'] as const) {
      if (spec[m] && !entry.methods.includes(m)) throw new Error(`describe: ${path} does not serve ${m}`);
    }
    entry.spec = spec;
  }

  /** Express middleware: dispatches to the matching route, or passes on (404) when none matches. */
  readonly dispatch = (req: Request, res: Response, next: (err?: unknown) => void): void => {
    const q = req.url.indexOf('?');
    let path = q === -1 ? req.url : req.url.slice(0, q);
    if (path.endsWith('/')) path = path.replace(/\/+$/, '');
    const segments = path.split('/');
    for (const route of this.bySize.get(segments.length) ?? []) {
      const params = matchSegments(route.segments, segments);
      if (params) {
        req.params = params;
        try {
          // Express parses req.query on every read: a URL without one skips it.
          refuseNulInRequest(params, q === -1 ? undefined : req.query);
        } catch (e) {
          next(e);
          return;
        }
        route.run(req, res).catch(next);
        return;
      }
    }
    next();
  };
}
