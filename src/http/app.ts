/**
 * createApp(deps): the Express 5 application, without listening. Order: format negotiation →
 * body (size-limited) → routes (auth inside the route table) → 404 → error body.
 */
import { IncomingMessage, type RequestListener, ServerResponse } from 'node:http';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { AccountService } from '../actors/account/account-service.js';
import type { CallCommands } from '../actors/call/call-commands.js';
import type { CallRuntime } from '../actors/call/call-runtime.js';
import type { LiveConferences } from '../actors/interpreter/verbs/conference-rooms.js';
import { AppError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Notifier } from '../notifications/notifier.js';
import type { NumberProvider } from '../numbers/provider.js';
import type { RecordingService } from '../recordings/recording-service.js';
import type { RecordingStorage } from '../recordings/storage.js';
import type { Account } from '../store/account-store.js';
import type { ApplicationStore } from '../store/application-store.js';
import type { CallStore } from '../store/call-store.js';
import type { CallerIdStore } from '../store/caller-id-store.js';
import type { ClientStore } from '../store/client-store.js';
import type { ConferenceStore } from '../store/conference-store.js';
import type { GatewayStore } from '../store/gateway-store.js';
import type { NotificationStore } from '../store/notification-store.js';
import type { NumberStore } from '../store/number-store.js';
import type { RecordingStore } from '../store/recording-store.js';
import type { SnapshotStore } from '../store/snapshot-store.js';
import { state } from './context.js';
import { dashboardRoutes } from './dashboard/routes.js';
import { errorHandler, notFound } from './errors.js';
import { negotiateFormat } from './format.js';
import { parseJsonSafely } from './json-body.js';
import { referenceRoutes } from './openapi/reference.js';
import { formBody } from './params.js';
import { type PhoneSettings, phoneRoutes } from './phone/routes.js';

const EMPTY_FORM = new Map<string, string[]>();

import type { SmsService } from '../actors/sms/sms-service.js';
import type { EmailService } from '../email/email-service.js';
import type { ProfileStore } from '../store/profile-store.js';
import type { SmsStore } from '../store/sms-store.js';
import { RouteTable } from './router.js';
import { accountRoutes } from './routes/accounts.js';
import { applicationRoutes } from './routes/applications.js';
import { availableNumberRoutes } from './routes/available-numbers.js';
import { callRoutes } from './routes/calls.js';
import { clientRoutes } from './routes/clients.js';
import { conferenceRoutes } from './routes/conferences.js';
import { emailRoutes } from './routes/email.js';
import { extensionRoutes } from './routes/extensions.js';
import { gatewayRoutes } from './routes/gateways.js';
import { incomingNumberRoutes } from './routes/incoming-numbers.js';
import { notificationRoutes } from './routes/notifications.js';
import { type ObservabilityDeps, observabilityRoutes } from './routes/observability.js';
import { outgoingCallerIdRoutes } from './routes/outgoing-caller-ids.js';
import { profileRoutes } from './routes/profiles.js';
import { recordingRoutes } from './routes/recordings.js';
import { smsRoutes } from './routes/sms.js';
import { type SupervisorSources, supervisorRoutes } from './routes/supervisor.js';
import {
  type SupervisorStreamDeps,
  SupervisorStreamServer,
  supervisorTicketRoutes,
} from './routes/supervisor-stream.js';
import { type UssdRouteDeps, ussdRoutes } from './routes/ussd.js';
import { twilioSurface } from './twilio/surface.js';
import { API_ROOT } from './uris.js';

export interface AppDeps {
  readonly logger: Logger;
  readonly publicUrl: string;
  readonly bodyLimit: number;
  readonly accounts: AccountService;
  readonly calls: CallStore;
  readonly applications: ApplicationStore;
  readonly clients: ClientStore;
  readonly numbers: NumberStore;
  readonly numberProvider: NumberProvider;
  readonly callerIds: CallerIdStore;
  /** CALLER_ID_POLICY: whether a REST call's E.164 From must be owned or a caller id. */
  readonly callerIdPolicy: 'open' | 'verified';
  readonly notifications: NotificationStore;
  readonly notifier: Notifier;
  readonly recordings: RecordingStore;
  readonly recordingService: RecordingService;
  readonly recordingStorage: RecordingStorage;
  readonly gateways: GatewayStore;
  /** The SIP target policy's verdict on a gateway `Proxy` (absent with SIP_ENABLED=false). */
  readonly checkGatewayProxy?: ((proxy: string) => Promise<string | null>) | undefined;
  /** Live actor state (the Gateway resource shows its registration from here). */
  readonly snapshots: SnapshotStore;
  /** The call runtime (null with SIP_ENABLED=false). */
  readonly callRuntime: CallRuntime | null;
  /** Conference records (the REST list and get). */
  readonly conferenceStore?: ConferenceStore;
  /** This node's live conferences: participants and commands (null with SIP_ENABLED=false). */
  readonly conferences?: LiveConferences | null;
  /** Live-call commands, here or forwarded to the call's node (null with SIP_ENABLED=false). */
  readonly callCommands: CallCommands | null;
  readonly profiles: ProfileStore;
  readonly profileBodyLimit: number;
  readonly effectiveProfileSid: (account: Account) => Promise<string>;
  // --- Messaging: routes are registered when the services are given ---
  readonly sms?: SmsService;
  readonly smsStore?: SmsStore;
  readonly email?: EmailService;
  /** `/health`, `/ready`, `/metrics`: served before (and so outside) the API's auth. */
  readonly observability?: ObservabilityDeps;
  /** The Supervisor API's figures (routes registered when given). */
  readonly supervisor?: SupervisorSources;
  /** The supervisor's live stream (WebSocket upgrades) and its tickets. */
  readonly supervisorStream?: SupervisorStreamDeps;
  /** USSD push (routes registered when given). */
  readonly ussd?: Omit<UssdRouteDeps, 'publicUrl'>;
  /** The sample web phone at /phone (served when given). */
  readonly phone?: PhoneSettings;
}

export interface App {
  readonly express: Express;
  /** The HTTP server's request listener (the API's requests first, then Express; see apiFirst). */
  readonly listener: RequestListener;
  readonly routes: RouteTable;
  /** Takes the WebSocket upgrades of the HTTP port (the supervisor stream); null without it. */
  readonly stream: SupervisorStreamServer | null;
}

export function createApp(deps: AppDeps): App {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  const routes = new RouteTable(deps.accounts);
  accountRoutes(routes, deps);
  callRoutes(routes, deps);
  if (deps.conferenceStore)
    conferenceRoutes(routes, { store: deps.conferenceStore, live: deps.conferences ?? null });
  applicationRoutes(routes, deps);
  clientRoutes(routes, deps);
  incomingNumberRoutes(routes, deps);
  availableNumberRoutes(routes, deps);
  outgoingCallerIdRoutes(routes, deps);
  notificationRoutes(routes, deps);
  recordingRoutes(routes, deps);
  gatewayRoutes(routes, deps);
  profileRoutes(routes, deps);
  extensionRoutes(routes, deps);
  // --- Messaging ---
  if (deps.sms && deps.smsStore)
    smsRoutes(routes, { sms: deps.sms, smsStore: deps.smsStore, publicUrl: deps.publicUrl });
  if (deps.email) emailRoutes(routes, { email: deps.email });
  if (deps.ussd) ussdRoutes(routes, { ...deps.ussd, publicUrl: deps.publicUrl });
  if (deps.supervisor) supervisorRoutes(routes, { supervisor: deps.supervisor, accounts: deps.accounts });
  if (deps.supervisorStream) supervisorTicketRoutes(routes, deps.supervisorStream);
  const stream = deps.supervisorStream ? new SupervisorStreamServer(deps.supervisorStream) : null;

  // One front middleware: format from the path, then the body (only requests that carry one go
  // through the body reader), then the route table; no match → 404. Few Express layers on purpose:
  // each one costs measurably on hot GETs (see docs/benchmarks.md).
  const formText = express.text({ type: 'application/x-www-form-urlencoded', limit: deps.bodyLimit });
  const route = (req: Request, res: Response, next: NextFunction) =>
    routes.dispatch(req, res, (err?: unknown) => (err ? next(err) : notFound(req, res, next)));
  // The profile API is JSON only, with JSON documents up to 10 MB (spec §Limits). Read as text and
  // parsed by parseJsonSafely: depth-capped before parsing, NUL and lone surrogates refused.
  const profileText = express.text({
    type: ['application/json', 'application/*+json'],
    limit: deps.profileBodyLimit,
  });
  const profileJson = (req: Request, res: Response, next: NextFunction) =>
    profileText(req, res, (err?: unknown) => {
      if (err) return next(err);
      try {
        if (typeof req.body === 'string')
          req.body = req.body.trim() === '' ? undefined : parseJsonSafely(req.body, 'Request body');
      } catch (e) {
        return next(e);
      }
      next();
    });
  const api = (req: Request, res: Response, next: NextFunction) => {
    if (
      req.url.startsWith(`${API_ROOT}/Profiles`) ||
      req.url.startsWith(`${API_ROOT}/ExtensionsConfiguration`)
    ) {
      state(res).format = 'json';
    }
    if (req.url.startsWith(`${API_ROOT}/Profiles`)) {
      state(res).form = EMPTY_FORM;
      profileJson(req, res, (err?: unknown) => (err ? next(err) : route(req, res, next)));
      return;
    }
    negotiateFormat(req, res, () => {
      if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) {
        state(res).form = EMPTY_FORM;
        route(req, res, next);
        return;
      }
      formText(req, res, (err?: unknown) => {
        if (err) return next(err);
        try {
          formBody(req, res, () => route(req, res, next));
        } catch (e) {
          next(e);
        }
      });
    });
  };
  // The native API first: none of the pages and operations endpoints below lives under its root,
  // so its requests skip four routers' matching (a measurable share of a cached GET's cost).
  app.use((req, res, next) => (req.url.startsWith(API_ROOT) ? api(req, res, next) : next()));
  if (deps.observability) app.use(observabilityRoutes(deps.observability));
  app.use(referenceRoutes(routes.entries, deps.publicUrl));
  app.use(dashboardRoutes());
  if (deps.phone) app.use(phoneRoutes(deps.phone));
  // Rewrites the Twilio surface's paths onto the native routes.
  app.use(twilioSurface({ bodyLimit: deps.bodyLimit }));
  app.use(api);
  const onError = errorHandler(deps.logger, deps.notifier, deps.publicUrl);
  app.use(onError);
  return { express: app, listener: apiFirst(app, api, onError), routes, stream };
}

type Middleware = (req: Request, res: Response, next: NextFunction) => void;
type ErrorMiddleware = (err: unknown, req: Request, res: Response, next: NextFunction) => void;

/**
 * The server's request listener: a request under the native API's root goes straight to `api`
 * with what Express's app.handle would have given it (prototypes, locals, originalUrl) and its
 * errors to the error handler, skipping the router's layer matching, which costs a measurable share
 * of a cached GET (docs/benchmarks.md). `api` never passes such a request on without an error (an
 * unmatched path is a 404), so nothing behind it in the Express stack would have seen it.
 * Everything else goes through Express.
 */
function apiFirst(app: Express, api: Middleware, onError: ErrorMiddleware): RequestListener {
  const fail = (err: unknown, req: Request, res: Response) => {
    try {
      onError(err, req, res, () => {});
    } catch {
      // The error handler itself failed: answer as Express's final handler would.
      if (!res.headersSent) res.statusCode = 500;
      res.end();
    }
  };
  return (incoming, outgoing) => {
    const url = incoming.url ?? '';
    if (!url.startsWith(API_ROOT)) {
      app(incoming, outgoing);
      return;
    }
    // The server of expressClasses() makes requests that inherit these already: changing an
    // object's prototype costs more than everything else here together.
    const req = (
      inherits(app.request, incoming) ? incoming : Object.setPrototypeOf(incoming, app.request)
    ) as Request;
    const res = (
      inherits(app.response, outgoing) ? outgoing : Object.setPrototypeOf(outgoing, app.response)
    ) as Response;
    req.res = res;
    res.req = req;
    res.locals = Object.create(null) as Response['locals'];
    req.originalUrl = url;
    req.baseUrl = '';
    const next: NextFunction = (err?: unknown) =>
      fail(err ?? new AppError('NotFound', `No resource at ${req.method} ${url.split('?')[0]}`), req, res);
    try {
      api(req, res, next);
    } catch (e) {
      fail(e, req, res);
    }
  };
}

const protoOf = Object.prototype.isPrototypeOf;
const inherits = (proto: object, o: object): boolean => protoOf.call(proto, o);

/**
 * The request and response classes for the API's node:http server: once `adopt(app)` has run, what
 * the server makes inherits the app's Express request and response from its construction, so
 * `apiFirst` need not change each object's prototype (a prototype change costs several microseconds
 * per request and leaves the object slower to read). Before that, plain node:http objects.
 */
export function expressClasses() {
  class ApiRequest extends IncomingMessage {}
  class ApiResponse extends ServerResponse<ApiRequest> {}
  return {
    IncomingMessage: ApiRequest,
    ServerResponse: ApiResponse,
    adopt(app: Express): void {
      Object.setPrototypeOf(ApiRequest.prototype, app.request);
      Object.setPrototypeOf(ApiResponse.prototype, app.response);
    },
  };
}
