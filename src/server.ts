/**
 * Builds and starts the whole service from a Config: logger → stores → actors/services → HTTP.
 * Used by src/main.ts (the process) and by the integration tests (in-process, port 0).
 * `close()` shuts down in reverse order and is idempotent.
 */
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { createActor } from 'xstate';
import { AccountService } from './actors/account/account-service.js';
import { CallAdmission } from './actors/call/admission.js';
import { RuntimeCallControl } from './actors/call/call-control.js';
import { CallRuntime } from './actors/call/call-runtime.js';
import { routeInbound } from './actors/call/inbound-routing.js';
import { MessagingBridge } from './actors/call/messaging-bridge.js';
import { createInterpreterMachine } from './actors/interpreter/interpreter.machine.js';
import { type InterpreterServices, MediaEventRouter, webhookFetcher } from './actors/interpreter/services.js';
import { ConferenceRooms } from './actors/interpreter/verbs/conference-rooms.js';
import { SipClientMessenger } from './actors/sms/client-messenger.js';
import { SmsService } from './actors/sms/sms-service.js';
import type { Config } from './config.js';
import { EmailService } from './email/email-service.js';
import { type App, createApp } from './http/app.js';
import { createLogger, type Logger } from './logger.js';
import { MediaEngine } from './media/media-engine.js';
import { Notifier } from './notifications/notifier.js';
import { LocalPoolProvider } from './numbers/provider.js';
import { ProfileResolver } from './profiles/resolution.js';
import { RecordingService } from './recordings/recording-service.js';
import { LocalRecordingStorage } from './recordings/storage.js';
import { PasswordVerifier } from './security/password-verifier.js';
import { userOf } from './sip/message.js';
import { SipService } from './sip/service.js';
import { formatSipAddress } from './sip/sip-uri.js';
import { SmppCarrierLink } from './smpp/link.js';
import { parseSmppUrls } from './smpp/url.js';
import type { ApplicationStore } from './store/application-store.js';
import type { CallStore } from './store/call-store.js';
import type { ClientStore } from './store/client-store.js';
import type { GatewayStore } from './store/gateway-store.js';
import type { NumberStore } from './store/number-store.js';
import { PgAccountStore } from './store/postgres/account-repository.js';
import { PgApplicationStore } from './store/postgres/application-repository.js';
import { PgCallStore } from './store/postgres/call-repository.js';
import { PgClientStore } from './store/postgres/client-repository.js';
import { type Db, ensureDatabase, migrate, openDb } from './store/postgres/db.js';
import { PgGatewayStore } from './store/postgres/gateway-repository.js';
import { PgNotificationStore } from './store/postgres/notification-repository.js';
import { PgNumberStore } from './store/postgres/number-repository.js';
import { PgProfileStore } from './store/postgres/profile-repository.js';
import { PgRecordingStore } from './store/postgres/recording-repository.js';
import { PgSmsStore } from './store/postgres/sms-repository.js';
import { RedisAccountBus } from './store/redis/account-bus.js';
import { RedisAuthThrottle } from './store/redis/auth-throttle.js';
import { RedisCallAdmission } from './store/redis/call-admission.js';
import { connectRedis, connectSubscriber, type Redis } from './store/redis/client.js';
import { RedisGatewayBus } from './store/redis/gateway-bus.js';
import { redisKeys } from './store/redis/keys.js';
import { RedisRegistrationStore } from './store/redis/registration-store.js';
import { RedisSnapshotStore } from './store/redis/snapshot-store.js';
import type { SmsStore } from './store/sms-store.js';
import { WebhookClient } from './webhooks/index.js';

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
  // --- Messaging ---
  readonly sms: SmsService;
  readonly smsStore: SmsStore;
  readonly email: EmailService;
  /** The SMPP carrier link, or null without SMPP_URL. */
  readonly smppLink: SmppCarrierLink | null;
  // --- end messaging ---
  /** Super Admin bootstrap outcome (a generated password is present only on first start without ADMIN_PASSWORD). */
  readonly bootstrap: { adminSid: string; generatedPassword?: string | undefined };
  close(): Promise<void>;
}

export async function startServer(config: Config, opts: { logger?: Logger } = {}): Promise<RunningServer> {
  const logger = opts.logger ?? createLogger(config.logLevel);
  const closers: Array<() => Promise<unknown> | unknown> = [];
  const close = async () => {
    while (closers.length) {
      const c = closers.pop() as () => Promise<unknown>;
      try {
        await c();
      } catch (e) {
        logger.warn({ err: e }, 'error during shutdown');
      }
    }
  };
  try {
    await ensureDatabase(config.database.url);
    const db = openDb(config.database.url);
    closers.push(() => db.dispose());
    const applied = await migrate(db);
    if (applied.length) logger.info({ applied }, 'database migrations applied');

    const redis = await connectRedis(config.redis.url);
    closers.push(() => redis.quit());
    const sub = await connectSubscriber(redis);
    closers.push(() => sub.quit());
    const keys = redisKeys(config.redis.prefix);
    const snapshots = new RedisSnapshotStore(redis, keys);

    const accounts = new AccountService({
      store: new PgAccountStore(db),
      snapshots,
      bus: new RedisAccountBus(redis, sub, keys.accountChannel),
      logger: logger.child({ component: 'accounts' }),
      auth: {
        verifier: new PasswordVerifier({
          concurrency: config.auth.verifyConcurrency,
          queue: config.auth.verifyQueue,
        }),
        throttle: new RedisAuthThrottle(redis, keys),
        options: config.auth,
      },
    });
    await accounts.start();
    closers.push(() => accounts.stop());
    const boot = await accounts.bootstrap({
      email: config.admin.email,
      password: config.admin.password,
      defaultDomain: config.organization.defaultDomain,
    });
    if (boot.generatedPassword) {
      // Logged once, on first start only: the account stays uninitialized until it sets its own password.
      logger.warn(
        { adminSid: boot.admin.sid, email: boot.admin.emailAddress, oneTimePassword: boot.generatedPassword },
        'ADMIN_PASSWORD not set: Super Admin created uninitialized with this one-time password; set a new Password to activate it',
      );
    }

    // Listen first so PUBLIC_URL can default to the port actually bound (HTTP_PORT=0 in tests).
    const server: Server = createHttpServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.http.port, config.http.host, () => resolve());
    });
    server.keepAliveTimeout = 65_000;
    // Until the app is composed (SIP, media engine, messaging start after listen), answer 503 rather
    // than leave requests hanging.
    const starting = (_req: IncomingMessage, res: ServerResponse) => {
      res.writeHead(503, { 'Retry-After': '1', 'Content-Type': 'text/plain' }).end('starting');
    };
    server.on('request', starting);
    closers.push(
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

    const calls = new PgCallStore(db);
    const applications = new PgApplicationStore(db);
    const clients = new PgClientStore(db);
    const numbers = new PgNumberStore(db);
    const notifications = new PgNotificationStore(db);
    const notifier = new Notifier(notifications, logger.child({ component: 'notifications' }), publicUrl);
    const recordings = new PgRecordingStore(db);
    const recordingStorage = new LocalRecordingStorage(config.recordings.dir);
    const recordingService = new RecordingService(recordings, recordingStorage);
    const gatewayBus = new RedisGatewayBus(redis, sub, keys.gatewayChannel);
    await gatewayBus.start();
    const gateways = new PgGatewayStore(db, gatewayBus);
    const profiles = new PgProfileStore(db);
    const profileResolver = new ProfileResolver(profiles, accounts);
    // Spec §Account Status: closing an account deletes most of its resources.
    accounts.onClosed(async (accountSid) => {
      await numbers.deleteAllOf(accountSid);
      await clients.deleteAllOf(accountSid);
      await applications.deleteAllOf(accountSid);
    });
    accounts.onMigrated((accountSid, organizationSid) =>
      clients.moveToOrganization(accountSid, organizationSid),
    );

    let sip: SipService | null = null;
    if (config.sip.enabled) {
      sip = new SipService(
        {
          ...config.sip,
          defaultDomain: config.organization.defaultDomain,
          minExpires: config.sip.registrarMinExpires,
          maxExpires: config.sip.registrarMaxExpires,
          isClientDomain: async (domain) => (await accounts.getOrganization(domain)) !== null,
        },
        { registrations: new RedisRegistrationStore(redis, keys), clients, gateways, snapshots },
        logger.child({ component: 'sip' }),
      );
      const sipService = sip;
      closers.push(() => sipService.close());
      await sip.start();
    }
    const webhooks = new WebhookClient({
      connectTimeoutMs: config.webhooks.connectTimeoutMs,
      totalTimeoutMs: config.webhooks.totalTimeoutMs,
      retries: config.webhooks.retries,
      blockPrivate: config.webhooks.blockPrivate,
      logger: logger.child({ component: 'webhooks' }),
      onFailure: (n) => {
        void notifier.notify({
          accountSid: n.accountSid,
          callSid: n.context.callSid ?? null,
          errorCode: n.errorCode,
          log: n.log,
          messageText: n.messageText,
          requestUrl: n.requestUrl,
          requestMethod: n.requestMethod,
          requestVariables: n.requestVariables,
          responseHeaders: { ...n.responseHeaders },
          responseBody: n.responseBody,
        });
      },
    });
    closers.push(async () => webhooks.close());
    const email = new EmailService(config.smtp, logger.child({ component: 'email' }));
    closers.push(() => email.close());
    const smsStore = new PgSmsStore(db);
    const smppLink = config.smpp.urls.length
      ? new SmppCarrierLink(parseSmppUrls(config.smpp.urls), {
          logger: logger.child({ component: 'smpp' }),
          // A receipt for an id this process never submitted (sent before a restart) is handed to the
          // SMS service after 5 s (not the link's 120 s default); the service finds it in Postgres.
          earlyReceiptTtlMs: 5_000,
        })
      : null;
    const sms = new SmsService({
      store: smsStore,
      link: smppLink,
      // SIP seam: the SIP core calls sms.useClientMessenger(...) once it runs (docs/sms.md "SIP seams").
      clientMessenger: null,
      numbers,
      applications,
      clients,
      multiProvider: profileResolver,
      accounts,
      webhooks,
      notifier,
      sendEmail: (e) =>
        email.send({
          from: e.from ?? config.smtp.from ?? `no-reply@${config.organization.defaultDomain}`,
          to: e.to,
          cc: e.cc,
          bcc: e.bcc,
          subject: e.subject,
          body: e.body,
          type: e.type,
          accountSid: e.account.sid,
        }),
      logger: logger.child({ component: 'sms' }),
      node: config.instanceId,
      timers: { LEASE_MS: config.smpp.leaseMs },
    });
    // --- end messaging ---

    const admission = new CallAdmission(new RedisCallAdmission(redis, keys), {
      maxConcurrent: config.limits.concurrentCallsPerAccount,
      perSecond: config.limits.callsPerSecondPerAccount,
      maxQueued: 10_000,
    });
    closers.push(async () => admission.stop());
    let callRuntime: CallRuntime | null = null;
    if (sip) {
      const sipService = sip;
      const media = new MediaEngine({
        media: config.media,
        storage: recordingStorage,
        logger: logger.child({ component: 'media' }),
        blockPrivateUrls: config.webhooks.blockPrivate,
      });
      await media.start();
      closers.push(() => media.close());
      const authTokenOf = async (sid: string) => (await accounts.get(sid))?.authToken ?? null;
      let interpreterMachine: ReturnType<typeof createInterpreterMachine> | null = null;
      // This node's conference rooms: the Dial verb keeps them, the REST Mute response reads them.
      const conferences = new ConferenceRooms();
      const runtime = new CallRuntime({
        sip: sipService.legs,
        media,
        calls,
        snapshots,
        admission,
        webhooks,
        notify: (n) => notifier.notify(n),
        authTokenOf,
        multiProviderOf: (sid) => profileResolver.effectiveMultiProvider(sid),
        locateClient: async (accountSid, login) => {
          const account = await accounts.get(accountSid);
          const org = account ? await accounts.getOrganization(account.organizationSid) : null;
          if (!org) return [];
          return (await sipService.registrar.locate(login, org.domainName)).map((b) => ({
            contact: b.contact,
            flow: b.flow,
          }));
        },
        routeInbound: (invite) =>
          routeInbound(invite, {
            findNumber: (e164) => numbers.findByNumber(e164),
            getApplication: (accountSid, sid) => applications.get(accountSid, sid),
            getClient: (accountSid, sid) => clients.get(accountSid, sid),
            findClient: async (domain, login) => (await clients.findForDigest(domain, login))?.client ?? null,
            domainOf: (host) => sipService.registrar.domainOf(host),
            accountStatus: async (sid) => (await accounts.get(sid))?.status ?? null,
            trustedSources: config.sip.trustedSources,
          }),
        startInterpreter: (input) => {
          if (!interpreterMachine) throw new Error('interpreter not composed');
          return createActor(interpreterMachine, { input }).start();
        },
        sipHost: config.sip.publicAddress,
        defaultProxy: config.sip.outboundProxy,
        instanceId: config.instanceId,
        callLeaseMs: config.limits.callLeaseMs,
        conferenceFlagsOf: (endpointId) => conferences.flagsOf(endpointId),
        numberOf: (accountSid, sid) => numbers.get(accountSid, sid),
        logger: logger.child({ component: 'calls' }),
      });
      const createRecording: InterpreterServices['createRecording'] = async (r) => {
        const rec = await recordingService.adopt({
          sid: r.recordingSid,
          accountSid: r.accountSid,
          callSid: r.callSid,
          durationSeconds: r.durationSeconds,
        });
        return {
          sid: rec.sid,
          url: `${publicUrl}/2012-04-24/Accounts/${rec.accountSid}/Recordings/${rec.sid}`,
          durationSeconds: rec.duration,
        };
      };
      // One media subscription fanned out per endpoint, for the Dialer and the interpreter.
      const mediaEvents = new MediaEventRouter(media);
      const control = new RuntimeCallControl(runtime, media, mediaEvents, {
        createRecording,
        notify: (n) => notifier.notify(n),
      });
      const messaging = new MessagingBridge({
        sms,
        email,
        accounts,
        notify: (n) => notifier.notify(n),
        defaultEmailFrom: config.smtp.from ?? `no-reply@${config.organization.defaultDomain}`,
      });
      // SIP seams of messaging: SMS to client:<login> goes out as SIP MESSAGE; MESSAGE in goes to SMS.
      const messenger = new SipClientMessenger({
        sendMessage: (m) => sipService.legs.sendMessage(m),
        locate: async (accountSid, login) => {
          const account = await accounts.get(accountSid);
          const org = account ? await accounts.getOrganization(account.organizationSid) : null;
          const [b] = org ? await sipService.registrar.locate(login, org.domainName) : [];
          return b && org
            ? { requestUri: b.contact, to: { uri: formatSipAddress(login, org.domainName) }, flow: b.flow }
            : null;
        },
        fromUri: (_accountSid, from) =>
          formatSipAddress(from.replace(/^client:/, ''), config.sip.publicAddress),
      });
      closers.push(sipService.legs.onEvent((e) => messenger.onSipEvent(e)));
      sms.useClientMessenger(messenger);
      sipService.legs.onMessage((m) =>
        sms.receiveSipMessage({
          from: m.client ? `client:${m.client.login}` : (userOf(m.from.uri) ?? m.from.uri),
          to: userOf(m.requestUri) ?? '',
          body: m.body,
          client: m.client ? { accountSid: m.client.accountSid, login: m.client.login } : undefined,
        }),
      );
      interpreterMachine = createInterpreterMachine({
        media,
        mediaEvents,
        fetch: webhookFetcher(webhooks, async (sid) => (await authTokenOf(sid)) ?? ''),
        call: control,
        dialer: control,
        sendSms: (r) => messaging.sendSms(r),
        sendEmail: (r) => messaging.sendEmail(r),
        createRecording,
        notify: (n) => notifier.notify(n),
        conferences,
      });
      callRuntime = runtime;
      closers.push(async () => runtime.stop());
      await runtime.startRecovery();
    }

    const app = createApp({
      logger: logger.child({ component: 'http' }),
      publicUrl,
      bodyLimit: config.http.bodyLimit,
      accounts,
      calls,
      applications,
      clients,
      numbers,
      numberProvider: new LocalPoolProvider(config.numbers.pool),
      notifications,
      notifier,
      recordings,
      recordingService,
      recordingStorage,
      gateways,
      checkGatewayProxy: sip ? (proxy: string) => sip.checkGatewayProxy(proxy) : undefined,
      snapshots,
      callRuntime,
      profiles,
      profileBodyLimit: config.http.profileBodyLimit,
      effectiveProfileSid: (account) => profileResolver.effectiveProfileSid(account),
      sms,
      smsStore,
      email,
    });
    server.off('request', starting);
    server.on('request', app.express);
    logger.info({ url, publicUrl }, 'switchboard listening');

    // --- Messaging: bind the SMSCs, resume pending messages; closed before the HTTP server ---
    closers.push(() => sms.close());
    smppLink?.start();
    await sms.start();
    // --- end messaging ---

    let closed = false;
    return {
      config,
      logger,
      url,
      port,
      db,
      redis,
      app,
      accounts,
      stores: { calls, applications, clients, numbers, gateways },
      notifier,
      recordings: recordingService,
      profiles: profileResolver,
      sip,
      sms,
      smsStore,
      email,
      smppLink,
      bootstrap: { adminSid: boot.admin.sid, generatedPassword: boot.generatedPassword },
      close: async () => {
        if (closed) return;
        closed = true;
        await close();
      },
    };
  } catch (e) {
    await close();
    throw e;
  }
}
