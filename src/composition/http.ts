/**
 * Composition of the HTTP side: the listener, bound before the rest so PUBLIC_URL can default to the
 * port actually bound (HTTP_PORT=0 in tests), and the Express app once everything it serves exists.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { AccountService } from '../actors/account/account-service.js';
import type { CallCommands } from '../actors/call/call-commands.js';
import type { CallRuntime } from '../actors/call/call-runtime.js';
import type { LiveConferences } from '../actors/interpreter/verbs/conference-rooms.js';
import type { SmsService } from '../actors/sms/sms-service.js';
import type { ClusterFigures } from '../actors/supervision/cluster-figures.js';
import type { LiveStream } from '../actors/supervision/live-stream.js';
import type { SupervisorView } from '../actors/supervision/supervisor-view.js';
import type { UssdRuntime } from '../actors/ussd/ussd-runtime.js';
import type { Config } from '../config.js';
import type { EmailService } from '../email/email-service.js';
import { type App, createApp, expressClasses } from '../http/app.js';
import type { ObservabilityDeps } from '../http/routes/observability.js';
import type { Logger } from '../logger.js';
import { LocalPoolProvider } from '../numbers/provider.js';
import type { SipService } from '../sip/service.js';
import { RedisStreamTickets } from '../store/redis/stream-tickets.js';
import type { SmsStore } from '../store/sms-store.js';
import type { Lifecycle } from './lifecycle.js';
import type { Connections, Repositories } from './stores.js';

export interface HttpListener {
  readonly port: number;
  /** Where this process answers (loopback when bound to all interfaces). */
  readonly url: string;
  /** The base of absolute URIs: PUBLIC_URL, else `url`. */
  readonly publicUrl: string;
  /** Stops answering 503 and hands every request to `app`. */
  serve(app: App): void;
}

/** Binds the HTTP port, answering 503 until `serve()` is called. */
export async function listenHttp(config: Config, lifecycle: Lifecycle): Promise<HttpListener> {
  // Listen first so PUBLIC_URL can default to the port actually bound (HTTP_PORT=0 in tests).
  const classes = expressClasses();
  const server: Server = createHttpServer({
    IncomingMessage: classes.IncomingMessage,
    ServerResponse: classes.ServerResponse,
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.http.port, config.http.host, () => resolve());
  });
  server.keepAliveTimeout = 65_000;
  // Until the app is composed (SIP, media engine, messaging start after listen), answer 503 rather
  // than leave requests hanging; except liveness: a node still starting (media engine, SIP) is alive.
  const starting = (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'GET' && req.url === '/health') {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
      res.end('{"status":"ok"}');
      return;
    }
    res.writeHead(503, { 'Retry-After': '1', 'Content-Type': 'text/plain' }).end('starting');
  };
  server.on('request', starting);
  lifecycle.onClose(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  const port = (server.address() as AddressInfo).port;
  const host = config.http.host === '0.0.0.0' ? '127.0.0.1' : config.http.host;
  const url = `http://${host}:${port}`;
  const publicUrl = config.http.publicUrlExplicit ? config.http.publicUrl : url;
  return {
    port,
    url,
    publicUrl,
    serve(app) {
      classes.adopt(app.express);
      server.off('request', starting);
      server.on('request', app.listener);
      // WebSocket upgrades on this port: the supervisor stream only (SIP over WebSocket has its own).
      server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
        if (!app.stream?.handleUpgrade(req, socket, head))
          socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      });
      lifecycle.onClose(() => app.stream?.close());
    },
  };
}

/** What the REST API serves. */
export interface HttpParts {
  readonly connections: Connections;
  readonly accounts: AccountService;
  readonly repositories: Repositories;
  readonly sip: SipService | null;
  readonly callRuntime: CallRuntime | null;
  /** This node's live conferences (null with SIP_ENABLED=false). */
  readonly conferences?: LiveConferences | null;
  readonly callCommands: CallCommands | null;
  readonly sms: SmsService;
  readonly smsStore: SmsStore;
  readonly email: EmailService;
  /** `/health`, `/ready`, `/metrics`. */
  readonly observability?: ObservabilityDeps;
  readonly supervisor: SupervisorView;
  readonly cluster: ClusterFigures | null;
  /** The supervisor's live stream (WebSocket on this port). */
  readonly liveStream?: LiveStream;
  /** USSD sessions (null with SIP_ENABLED=false). */
  readonly ussd?: UssdRuntime | null;
}

/** The package version (the same file from src/ and from dist/). */
function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * The source revision (Supervisor `Revision`): the one `npm run build` wrote beside the compiled
 * code (dist/REVISION), else the checkout's `git rev-parse` when run from source, else "unknown".
 * Read once at start.
 */
function buildRevision(): string {
  try {
    const recorded = readFileSync(new URL('../REVISION', import.meta.url), 'utf8').trim();
    if (/^[0-9a-f]{7,40}$/.test(recorded)) return recorded;
  } catch {
    // Not a build: ask git below.
  }
  try {
    const head = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], {
      cwd: new URL('../..', import.meta.url),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 2000,
    }).trim();
    return /^[0-9a-f]{7,40}$/.test(head) ? head : 'unknown';
  } catch {
    return 'unknown';
  }
}

export function composeApp(config: Config, logger: Logger, publicUrl: string, parts: HttpParts): App {
  const { accounts, sip, callRuntime, callCommands, sms, smsStore, email, supervisor, cluster } = parts;
  const { snapshots } = parts.connections;
  const {
    calls,
    applications,
    clients,
    numbers,
    callerIds,
    notifications,
    notifier,
    recordings,
    recordingService,
    recordingStorage,
    gateways,
    profiles,
    profileResolver,
  } = parts.repositories;
  return createApp({
    logger: logger.child({ component: 'http' }),
    publicUrl,
    bodyLimit: config.http.bodyLimit,
    accounts,
    calls,
    applications,
    clients,
    numbers,
    numberProvider: new LocalPoolProvider(config.numbers.pool),
    callerIds,
    callerIdPolicy: config.numbers.callerIdPolicy,
    notifications,
    notifier,
    recordings,
    recordingService,
    recordingStorage,
    gateways,
    checkGatewayProxy: sip ? (proxy: string) => sip.checkGatewayProxy(proxy) : undefined,
    snapshots,
    callRuntime,
    conferenceStore: parts.repositories.conferences,
    conferences: parts.conferences ?? null,
    callCommands,
    profiles,
    profileBodyLimit: config.http.profileBodyLimit,
    effectiveProfileSid: (account) => profileResolver.effectiveProfileSid(account),
    sms,
    smsStore,
    email,
    ...(parts.observability ? { observability: parts.observability } : {}),
    supervisor: {
      view: supervisor,
      instanceId: config.instanceId,
      version: packageVersion(),
      revision: buildRevision(),
      registeredUsers: async () => (sip ? sip.registrar.countRegistered() : null),
      smsMetrics: () => sms.metrics(),
      cluster,
    },
    ussd: { ussd: parts.ussd ?? null, gatewayConfigured: config.ussd.gatewayUri !== null },
    phone: {
      ports: () => ({ ws: sip?.bound?.ws ?? null, wss: sip?.bound?.wss ?? null }),
      domain: config.organization.defaultDomain,
    },
    ...(parts.liveStream
      ? {
          supervisorStream: {
            stream: parts.liveStream,
            accounts,
            tickets: new RedisStreamTickets(parts.connections.redis, parts.connections.keys),
            logger: logger.child({ component: 'supervisor-stream' }),
            publicUrl,
            limits: config.supervisorStream,
          },
        }
      : {}),
  });
}
