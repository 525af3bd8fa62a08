/**
 * createApp(deps): the Express 5 application, without listening. Order: format negotiation →
 * body (size-limited) → routes (auth inside the route table) → 404 → error body.
 */
import express, { type Express } from 'express';
import type { AccountService } from '../actors/account/account-service.js';
import type { Logger } from '../logger.js';
import type { Account } from '../store/account-store.js';
import { errorHandler, notFound } from './errors.js';
import { negotiateFormat } from './format.js';
import { formBody } from './params.js';
import { RouteTable } from './router.js';
import { accountRoutes } from './routes/accounts.js';

export interface AppDeps {
  readonly logger: Logger;
  readonly publicUrl: string;
  readonly bodyLimit: number;
  readonly accounts: AccountService;
  readonly effectiveProfileSid: (account: Account) => Promise<string>;
}

export interface App {
  readonly express: Express;
  readonly routes: RouteTable;
}

export function createApp(deps: AppDeps): App {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(negotiateFormat);
  app.use(express.text({ type: 'application/x-www-form-urlencoded', limit: deps.bodyLimit }));
  app.use(formBody);

  const router = express.Router({ caseSensitive: true, strict: false });
  const routes = new RouteTable(router, deps.accounts);
  accountRoutes(routes, deps);
  app.use(router);

  app.use(notFound);
  app.use(errorHandler(deps.logger));
  return { express: app, routes };
}
