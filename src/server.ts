/**
 * Builds and starts the whole service from a Config: logger → stores → actors/services → HTTP.
 * Used by src/main.ts (the process) and by the integration tests (in-process, port 0).
 * `close()` shuts down in reverse order and is idempotent.
 *
 * The steps live in src/composition/ (stores, accounts, http, webhooks, messaging, voice), each
 * registering its closers with the one Lifecycle; this function only orders them.
 */
import type { AccountService } from './actors/account/account-service.js';
import { CallCommands } from './actors/call/call-commands.js';
import type { ConferenceRooms, LiveConferences } from './actors/interpreter/verbs/conference-rooms.js';
import { NodeRpcRoutes } from './actors/node-rpc-routes.js';
import type { SmsService } from './actors/sms/sms-service.js';
import { ClusterFigures, publishedFigures } from './actors/supervision/cluster-figures.js';
import { LiveStream } from './actors/supervision/live-stream.js';
import { SupervisorView } from './actors/supervision/supervisor-view.js';
import { startAccounts } from './composition/accounts.js';
import { composeApp, listenHttp } from './composition/http.js';
import { Lifecycle } from './composition/lifecycle.js';
import { composeMessaging, startMessaging } from './composition/messaging.js';
import { composeObservability } from './composition/observability.js';
import { connectStores, openRepositories } from './composition/stores.js';
import { composeUssd } from './composition/ussd.js';
import { composeVoice, startSip } from './composition/voice.js';
import { createWebhooks } from './composition/webhooks.js';
import type { Config } from './config.js';
import type { EmailService } from './email/email-service.js';
import type { App } from './http/app.js';
import { createLogger, type Logger } from './logger.js';
import type { MediaPort } from './media/port.js';
import { createMetrics, type Metrics } from './metrics/prometheus.js';
import { Readiness } from './metrics/readiness.js';
import type { Notifier } from './notifications/notifier.js';
import type { ProfileResolver } from './profiles/resolution.js';
import type { RecordingService } from './recordings/recording-service.js';
import type { SipService } from './sip/service.js';
import type { SmppCarrierLink } from './smpp/link.js';
import type { ApplicationStore } from './store/application-store.js';
import type { CallStore } from './store/call-store.js';
import type { ClientStore } from './store/client-store.js';
import type { GatewayStore } from './store/gateway-store.js';
import type { NumberStore } from './store/number-store.js';
import type { Db } from './store/postgres/db.js';
import type { Redis } from './store/redis/client.js';
import { RedisNodeRpc } from './store/redis/node-rpc.js';
import { RedisStreamRelay } from './store/redis/stream-relay.js';
import { RedisSupervisorFigures } from './store/redis/supervisor-figures.js';
import type { SmsStore } from './store/sms-store.js';

/** How long a REST command forwarded to the node running the call waits for its answer. */
const COMMAND_FORWARD_TIMEOUT_MS = 3_000;

export interface RunningServer {
  readonly config: Config;
  readonly logger: Logger;
  readonly url: string;
  readonly port: number;
  readonly db: Db;
  readonly redis: Redis;
  readonly app: App;
  readonly accounts: AccountService;
  readonly stores: {
    readonly calls: CallStore;
    readonly applications: ApplicationStore;
    readonly clients: ClientStore;
    readonly numbers: NumberStore;
    readonly gateways: GatewayStore;
  };
  readonly notifier: Notifier;
  readonly recordings: RecordingService;
  readonly profiles: ProfileResolver;
  /** The SIP service (registrar, call legs), or null with SIP_ENABLED=false. */
  readonly sip: SipService | null;
  /** This node's live conferences, or null with SIP_ENABLED=false. */
  readonly conferences: ConferenceRooms | null;
  /** This node's media engine (endpoint counters for tests and tools), or null with SIP_ENABLED=false. */
  readonly media: MediaPort | null;
  // --- Messaging ---
  readonly sms: SmsService;
  readonly smsStore: SmsStore;
  readonly email: EmailService;
  /** The SMPP carrier link, or null without SMPP_URL. */
  readonly smppLink: SmppCarrierLink | null;
  // --- end messaging ---
  /** Prometheus series of this server (tests read them through `registry`). */
  readonly metrics: Metrics;
  /** The dependency checks behind `GET /ready`. */
  readonly readiness: Readiness;
  /** What the Supervisor API shows (live calls and figures of this node). */
  readonly supervisor: SupervisorView;
  /** The supervisor's live stream (what `/Supervisor/stream` clients receive). */
  readonly liveStream: LiveStream;
  /**
   * Graceful stop, before close(): new INVITEs and REST calls get 503, `/ready` turns 503, and live
   * calls run until they end or `timeoutMs` passes, when they are ended with their callbacks.
   */
  drain(timeoutMs: number): Promise<void>;
  /** Super Admin bootstrap outcome (a generated password is present only on first start without ADMIN_PASSWORD). */
  readonly bootstrap: { adminSid: string; generatedPassword?: string | undefined };
  close(): Promise<void>;
}

export async function startServer(config: Config, opts: { logger?: Logger } = {}): Promise<RunningServer> {
  const logger = opts.logger ?? createLogger(config.logLevel);
  const lifecycle = new Lifecycle(logger);
  return lifecycle.start(async () => {
    // Operations (/metrics, /ready): created first so every part can be metered as it is composed.
    const metrics = createMetrics();
    const readiness = new Readiness();
    const connections = await connectStores(config, logger, lifecycle, metrics.stores);
    const { accounts, boot } = await startAccounts(config, logger, connections, lifecycle);
    const http = await listenHttp(config, lifecycle);
    const { url, port, publicUrl } = http;
    const repositories = await openRepositories(config, logger, connections, accounts, publicUrl);
    const sip = await startSip(config, logger, connections, repositories, accounts, lifecycle, metrics.sip);
    const webhooks = createWebhooks(config, logger, repositories.notifier, lifecycle, metrics.webhooks);
    const messaging = composeMessaging(
      config,
      logger,
      { connections, repositories, accounts, webhooks },
      lifecycle,
    );
    // What supervisors see: fed by every call event of this node.
    const supervisor = new SupervisorView();
    // The live stream follows the view in the same synchronous pass: its figures match its calls.
    // Its deltas go to every node sharing the Redis, and theirs come here (cluster-wide stream).
    const streamRelay = new RedisStreamRelay(
      connections.redis,
      connections.sub,
      connections.keys.supervisorStreamChannel,
    );
    const liveStream = new LiveStream({
      node: config.instanceId,
      metrics: (accounts) => supervisor.figures(accounts),
      relay: (message) => {
        streamRelay.publish(message).catch((err) => logger.debug({ err }, 'stream delta not relayed'));
      },
      // Call deltas cost nothing while no node has a subscriber.
      onDemand: {},
    });
    await streamRelay.subscribe((message) => liveStream.applyRemote(message));
    let conferences: ConferenceRooms | null = null;
    let liveConferences: LiveConferences | null = null;
    // Requests between nodes (one subscription per node): call commands and conferences.
    const rpc = new RedisNodeRpc(connections.redis, connections.sub, connections.keys, config.instanceId);
    lifecycle.onClose(() => rpc.close());
    const rpcRoutes = new NodeRpcRoutes(rpc);
    let media: MediaPort | null = null;

    lifecycle.onClose(() => liveStream.close());
    // Registrations reach the stream as the registrar announces them (expiry: the stream's timers).
    sip?.registrar.onChange(liveStream.observeRegistration);
    const callRuntime = await composeVoice(
      config,
      logger,
      {
        connections,
        repositories,
        accounts,
        sip,
        webhooks,
        messaging,
        publicUrl,
        metrics,
        readiness,
        callObservers: [supervisor.observe, liveStream.observe],
        onConferences: (rooms, live) => {
          conferences = rooms;
          liveConferences = live;
        },
        rpc: rpcRoutes.route('conference.'),
        rpcTimeoutMs: COMMAND_FORWARD_TIMEOUT_MS,
        onMedia: (engine) => {
          media = engine;
        },
      },
      lifecycle,
    );

    const ussd = composeUssd(
      config,
      logger,
      { sip, repositories, accounts, webhooks, observers: [supervisor.observe, liveStream.observe] },
      lifecycle,
    );

    // REST commands on a call reach the node that runs it, from any node.
    let callCommands: CallCommands | null = null;
    if (callRuntime) {
      callCommands = new CallCommands({
        runtime: callRuntime,
        owners: repositories.calls,
        rpc: rpcRoutes.route('call.'),
        self: config.instanceId,
        timeoutMs: COMMAND_FORWARD_TIMEOUT_MS,
      });
      await callCommands.serve();
    }
    const { sms, smsStore, email, smppLink } = messaging;
    let draining = false;
    readiness.add('accepting', () => ({
      up: !draining,
      parts: { state: draining ? 'draining' : 'accepting' },
    }));
    const observability = composeObservability(config, { connections, sip, messaging, metrics, readiness });
    // Each node publishes its supervisor figures so any node can answer for the cluster.
    const cluster = new ClusterFigures({
      store: new RedisSupervisorFigures(connections.redis, connections.keys),
      instanceId: config.instanceId,
      local: () => publishedFigures(supervisor, sms.metrics()),
      logger: logger.child({ component: 'supervisor' }),
    });
    cluster.start();
    lifecycle.onClose(() => cluster.stop());
    const app = composeApp(config, logger, publicUrl, {
      connections,
      accounts,
      repositories,
      sip,
      callRuntime,
      conferences: liveConferences,
      callCommands,
      sms,
      smsStore,
      email,
      observability,
      supervisor,
      cluster,
      liveStream,
      ussd,
    });
    http.serve(app);
    logger.info({ url, publicUrl }, 'switchboard listening');

    // Messaging: bind the SMSCs, resume pending messages; closed before the HTTP server.
    await startMessaging(messaging, lifecycle);

    const { calls, applications, clients, numbers, gateways, notifier, recordingService, profileResolver } =
      repositories;
    return {
      config,
      logger,
      url,
      port,
      db: connections.db,
      redis: connections.redis,
      app,
      accounts,
      stores: { calls, applications, clients, numbers, gateways },
      notifier,
      recordings: recordingService,
      profiles: profileResolver,
      sip,
      conferences,
      media,
      sms,
      smsStore,
      email,
      smppLink,
      metrics,
      readiness,
      supervisor,
      liveStream,
      bootstrap: { adminSid: boot.admin.sid, generatedPassword: boot.generatedPassword },
      drain: async (timeoutMs: number) => {
        if (draining) return;
        draining = true;
        sip?.drain();
        const ended = callRuntime ? await callRuntime.drain(timeoutMs) : 0;
        logger.info({ ended }, 'drained: no live calls left');
      },
      close: () => lifecycle.close(),
    };
  });
}
