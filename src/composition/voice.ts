/**
 * Composition of voice: the SIP service (registrar, call legs), and with it the media engine, call
 * admission, the call runtime, the markup interpreter, conferences and the SIP seams of messaging
 * (SMS to `client:` as SIP MESSAGE, MESSAGE in as SMS). Without SIP (SIP_ENABLED=false) there is no
 * call runtime; admission still exists.
 */
import { createActor } from 'xstate';
import type { AccountService } from '../actors/account/account-service.js';
import { CallAdmission } from '../actors/call/admission.js';
import { RuntimeCallControl } from '../actors/call/call-control.js';
import type { CallObserver } from '../actors/call/call-observers.js';
import type { CallRuntime } from '../actors/call/call-runtime.js';
import { routeInbound } from '../actors/call/inbound-routing.js';
import { MessagingBridge } from '../actors/call/messaging-bridge.js';
import {
  ConferenceEventBus,
  statusCallbacks as conferenceCallbacks,
  recordWriter,
  type SendConferenceCallback,
} from '../actors/conference/conference-observers.js';
import { RemoteConferences } from '../actors/conference/remote-conferences.js';
import { createInterpreterMachine } from '../actors/interpreter/interpreter.machine.js';
import {
  type InterpreterServices,
  MediaEventRouter,
  webhookFetcher,
} from '../actors/interpreter/services.js';
import { ConferenceRooms, type LiveConferences } from '../actors/interpreter/verbs/conference-rooms.js';
import { SipClientMessenger } from '../actors/sms/client-messenger.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { MediaEngine } from '../media/media-engine.js';
import type { MediaPort } from '../media/port.js';
import type { SipMeter } from '../metrics/port.js';
import type { Metrics } from '../metrics/prometheus.js';
import type { Readiness } from '../metrics/readiness.js';
import { userOf } from '../sip/message.js';
import { SipService } from '../sip/service.js';
import { formatSipAddress } from '../sip/sip-uri.js';
import { ConferenceEndReason, ConferenceStatus } from '../store/conference-store.js';
import type { NodeRpc } from '../store/node-rpc.js';
import { RedisCallAdmission } from '../store/redis/call-admission.js';
import { RedisConferenceOwners } from '../store/redis/conference-owner.js';
import { RedisLeases } from '../store/redis/leases.js';
import { RedisRegistrationStore } from '../store/redis/registration-store.js';
import type { WebhookClient } from '../webhooks/index.js';
import { composeCalls } from './calls.js';
import type { Lifecycle } from './lifecycle.js';
import type { Messaging } from './messaging.js';
import type { Connections, Repositories } from './stores.js';

/** Starts the SIP service, or returns null with SIP_ENABLED=false. */
export async function startSip(
  config: Config,
  logger: Logger,
  { redis, keys, snapshots }: Connections,
  { clients, gateways }: Repositories,
  accounts: AccountService,
  lifecycle: Lifecycle,
  meter?: SipMeter,
): Promise<SipService | null> {
  let sip: SipService | null = null;
  if (config.sip.enabled) {
    sip = new SipService(
      {
        ...config.sip,
        defaultDomain: config.organization.defaultDomain,
        minExpires: config.sip.registrarMinExpires,
        maxExpires: config.sip.registrarMaxExpires,
        instanceId: config.instanceId,
        isClientDomain: async (domain) => (await accounts.getOrganization(domain)) !== null,
        ...(meter ? { meter } : {}),
      },
      {
        registrations: new RedisRegistrationStore(redis, keys),
        clients,
        gateways,
        snapshots,
        leases: new RedisLeases(redis, keys),
      },
      logger.child({ component: 'sip' }),
    );
    const sipService = sip;
    lifecycle.onClose(() => sipService.close());
    await sip.start();
  }
  return sip;
}

export interface VoiceDeps {
  readonly connections: Connections;
  readonly repositories: Repositories;
  readonly accounts: AccountService;
  readonly sip: SipService | null;
  readonly webhooks: WebhookClient;
  readonly messaging: Messaging;
  readonly publicUrl: string;
  /** Metrics fed by the actors' observers. */
  readonly metrics: Metrics;
  /** Where the media engine reports its readiness. */
  readonly readiness?: Readiness;
  /** Live views fed by every call event (the supervisor's). */
  readonly callObservers?: readonly CallObserver[];
  /**
   * Receives this node's conferences once composed, and what the REST API reads and commands
   * (every node's live conferences when `rpc` is given).
   */
  readonly onConferences?: (conferences: ConferenceRooms, live: LiveConferences) => void;
  /** Requests between nodes (kind `conference.*`): rooms span the cluster's nodes. */
  readonly rpc?: NodeRpc;
  /** How long a request to another node waits for its answer. */
  readonly rpcTimeoutMs?: number;
  /** Receives this node's media engine once started. */
  readonly onMedia?: (media: MediaPort) => void;
}

/** Call admission, then (with SIP) the media engine, call runtime and interpreter; recovers this node's calls. */
export async function composeVoice(
  config: Config,
  logger: Logger,
  deps: VoiceDeps,
  lifecycle: Lifecycle,
): Promise<CallRuntime | null> {
  const { redis, keys, snapshots } = deps.connections;
  const {
    calls,
    applications,
    clients,
    numbers,
    notifier,
    recordingStorage,
    recordingService,
    profileResolver,
  } = deps.repositories;
  const { accounts, sip, webhooks, publicUrl, metrics } = deps;
  const { sms, email } = deps.messaging;
  const admission = new CallAdmission(new RedisCallAdmission(redis, keys), {
    maxConcurrent: config.limits.concurrentCallsPerAccount,
    perSecond: config.limits.callsPerSecondPerAccount,
    maxQueued: 10_000,
  });
  lifecycle.onClose(async () => admission.stop());
  let callRuntime: CallRuntime | null = null;
  if (sip) {
    const sipService = sip;
    const media = new MediaEngine({
      media: config.media,
      engineExecArgv: config.mediaEngineNodeArgs,
      storage: recordingStorage,
      logger: logger.child({ component: 'media' }),
      blockPrivateUrls: config.webhooks.blockPrivate,
    });
    await media.start();
    deps.onMedia?.(media);
    lifecycle.onClose(() => media.close());
    // Operations: the engine's readiness and endpoint count (composition/observability.ts has the rest).
    deps.readiness?.add('media', () => ({ up: media.isReady }));
    metrics.observe({
      mediaEndpoints: () => media.endpointCount,
      mediaLoad: async () => (media.isReady ? media.load() : null),
    });
    const authTokenOf = async (sid: string) => (await accounts.get(sid))?.authToken ?? null;
    let interpreterMachine: ReturnType<typeof createInterpreterMachine> | null = null;
    // This node's conferences: the Dial verb enters them, the REST API reads and commands them, and
    // their events go to the record writer and the status callbacks.
    const conferenceEvents = new ConferenceEventBus(logger.child({ component: 'conferences' }));
    conferenceEvents.subscribe(recordWriter(deps.repositories.conferences, logger));
    const sendConferenceCallback: SendConferenceCallback = async (
      accountSid,
      conferenceSid,
      url,
      method,
      params,
    ) => {
      const authToken = await authTokenOf(accountSid);
      if (authToken === null) return;
      await webhooks.request({
        url,
        method,
        params: Object.entries(params),
        accountSid,
        authToken,
        context: { conferenceSid },
      });
    };
    conferenceEvents.subscribe(conferenceCallbacks(sendConferenceCallback, logger));
    let muteCall: ((callSid: string, muted: boolean) => boolean) | null = null;
    let remote: RemoteConferences | null = null;
    const conferences = new ConferenceRooms({
      publish: (e) => {
        conferenceEvents.publish(e);
        remote?.observe(e);
      },
      muteCall: (callSid, muted) => muteCall?.(callSid, muted) ?? false,
    });
    // One media subscription fanned out per endpoint, for the calls, the Dialer and the interpreter.
    const mediaEvents = new MediaEventRouter(media);
    // A room runs on one node (its claim's holder); calls on other nodes join it over an RTP link.
    if (deps.rpc) {
      const store = deps.repositories.conferences;
      remote = new RemoteConferences({
        rooms: conferences,
        media,
        mediaEvents,
        owners: new RedisConferenceOwners(redis, keys),
        calls,
        rpc: deps.rpc,
        self: config.instanceId,
        leaseMs: config.limits.callLeaseMs,
        timeoutMs: deps.rpcTimeoutMs ?? 3000,
        completeRecord: (sid, at) =>
          store.update(sid, {
            status: ConferenceStatus.Completed,
            reasonConferenceEnded: ConferenceEndReason.NodeStopped,
            dateUpdated: at,
          }),
        sendCallback: sendConferenceCallback,
        logger: logger.child({ component: 'conferences' }),
      });
      await remote.serve();
    }
    deps.onConferences?.(conferences, remote ?? conferences);
    const {
      runtime,
      legs,
      inbound,
      recovery,
      snapshots: snapshotWriter,
    } = composeCalls({
      // A call's own Mute (POST /Calls/{sid}) shows on its participant too.
      observers: [
        ...(deps.callObservers ?? []),
        (e) => {
          if (e.type !== 'call.muted') return;
          conferences.callMuted(e.call.origin.sid, e.muted);
          remote?.callMuted(e.call.origin.sid, e.muted);
        },
      ],
      sip: sipService.legs,
      media,
      mediaEvents,
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
      conferenceFlagsOf: (endpointId) =>
        conferences.flagsOf(endpointId) ?? remote?.flagsOf(endpointId) ?? null,
      numberOf: (accountSid, sid) => numbers.get(accountSid, sid),
      applicationOf: (accountSid, sid) => applications.get(accountSid, sid),
      meter: metrics.calls,
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
    const control = new RuntimeCallControl(legs, media, mediaEvents, {
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
    lifecycle.onClose(sipService.legs.onEvent((e) => messenger.onSipEvent(e)));
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
      ...(remote ? { remoteConferences: remote } : {}),
    });
    callRuntime = runtime;
    muteCall = (callSid, muted) => runtime.setMuted(callSid, muted);
    lifecycle.onClose(async () => {
      // Conferences end with the node, each once its participants have left (those of other nodes
      // are told, and their <Dial> goes on there); their records, callbacks and end marks are
      // written before the stores close.
      await conferences.stopAll();
      recovery.stop();
      inbound.stop();
      // Calls still live here are left to recovery elsewhere: their newest snapshots first.
      await snapshotWriter.flush();
      runtime.stop();
      await remote?.close();
      conferences.close();
      await conferenceEvents.drain();
    });
    await recovery.start();
  }
  return callRuntime;
}
