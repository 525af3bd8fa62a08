/**
 * Composition of the voice core: the call machine with its live effects, the call event bus with
 * its observers (CDR, callbacks, Notifications, snapshots, metrics), the registry and recovery.
 */
import type { AnyActorRef } from 'xstate';
import type { CallAdmission } from '../actors/call/admission.js';
import { createCallMachine } from '../actors/call/call.machine.js';
import { CallApps } from '../actors/call/call-apps.js';
import { callMetrics } from '../actors/call/call-metrics.js';
import {
  CallEventBus,
  type CallObserver,
  cdrWriter,
  failureNotifier,
  type SendCallback,
  statusCallbacks,
} from '../actors/call/call-observers.js';
import { CallRuntime, type CallRuntimeDeps } from '../actors/call/call-runtime.js';
import { type SnapshotWriter, snapshotWriter } from '../actors/call/call-snapshots.js';
import { InboundCalls, type InboundCallsDeps } from '../actors/call/inbound-calls.js';
import { LegControl } from '../actors/call/leg-control.js';
import { type LiveEffectsDeps, liveCallEffects } from '../actors/call/live-effects.js';
import { CallRecovery } from '../actors/call/recovery.js';
import { type TransferDeps, transferEnds } from '../actors/call/transfer.js';
import type { InterpreterInput } from '../actors/interpreter/interpreter.types.js';
import type { Logger } from '../logger.js';
import type { CallMeter } from '../metrics/port.js';
import type { NotifyInput } from '../notifications/notifier.js';
import type { SipPort } from '../sip/port.js';
import type { CallStore } from '../store/call-store.js';
import type { IncomingNumber } from '../store/number-store.js';
import type { SnapshotStore } from '../store/snapshot-store.js';
import type { WebhookRequest, WebhookResult } from '../webhooks/index.js';

export interface CallsDeps
  extends Omit<LiveEffectsDeps, 'apps' | 'onAdmissionReleaseError' | 'sip' | 'transfers'>,
    Pick<CallRuntimeDeps, 'instanceId' | 'callLeaseMs' | 'conferenceFlagsOf'>,
    Pick<InboundCallsDeps, 'routeInbound'> {
  readonly sip: SipPort & InboundCallsDeps['sip'];
  readonly admission: CallAdmission;
  readonly calls: CallStore;
  readonly snapshots: SnapshotStore;
  readonly webhooks: { request(req: WebhookRequest): Promise<WebhookResult> };
  readonly notify: (input: NotifyInput) => unknown;
  /** The account's AuthToken (signs its webhooks). */
  readonly authTokenOf: (accountSid: string) => Promise<string | null>;
  readonly numberOf: (accountSid: string, sid: string) => Promise<IncomingNumber | null>;
  readonly applicationOf: TransferDeps['applicationOf'];
  readonly startInterpreter: (input: InterpreterInput) => AnyActorRef;
  readonly meter: CallMeter;
  /** Further observers of every call event (live views), subscribed last. */
  readonly observers?: readonly CallObserver[];
  readonly logger: Logger;
}

export function composeCalls(d: CallsDeps): {
  runtime: CallRuntime;
  legs: LegControl;
  inbound: InboundCalls;
  recovery: CallRecovery;
  bus: CallEventBus;
  snapshots: SnapshotWriter;
} {
  const logger = d.logger;
  const sendCallback: SendCallback = async (call, url, method, params) => {
    const authToken = await d.authTokenOf(call.accountSid);
    if (authToken === null) return;
    await d.webhooks.request({
      url,
      method,
      params: Object.entries(params),
      accountSid: call.accountSid,
      authToken,
      context: { callSid: call.sid },
    });
  };
  let runtime: CallRuntime | null = null;
  let legs: LegControl | null = null;
  const bus = new CallEventBus(logger);
  const apps = new CallApps({
    // The app knows the call as it was when the app started: its verb events carry the call as it is now.
    publish: (e) => bus.publish({ ...e, call: runtime?.contextOf(e.call.origin.sid) ?? e.call }),
    startInterpreter: d.startInterpreter,
    bridgeClient: (sid, login, signal) => legs?.bridgeClient(sid, login, signal) ?? Promise.resolve(),
    logger,
  });
  const machine = createCallMachine(
    liveCallEffects({
      ...d,
      apps,
      onAdmissionReleaseError: (err, sid) =>
        logger.warn({ err, callSid: sid }, 'admission slot not released'),
      transfers: {
        contextOf: (sid) => runtime?.contextOf(sid) ?? null,
        liveStatus: (sid) => runtime?.liveStatus(sid) ?? null,
        send: (sid, event) => runtime?.send(sid, event) ?? false,
        numberOf: d.numberOf,
        applicationOf: d.applicationOf,
      },
    }),
  );
  // Order matters: the record is written before anything reports it.
  bus.subscribe(cdrWriter(d.calls, logger));
  const snapshots = snapshotWriter(d.snapshots, (sid) => runtime?.persistedOf(sid) ?? null, logger);
  bus.subscribe(snapshots);
  bus.subscribe(callMetrics(d.meter));
  bus.subscribe(failureNotifier(d.notify));
  runtime = new CallRuntime({
    sip: d.sip,
    media: d.media,
    machine,
    bus,
    calls: d.calls,
    instanceId: d.instanceId,
    callLeaseMs: d.callLeaseMs,
    ...(d.conferenceFlagsOf ? { conferenceFlagsOf: d.conferenceFlagsOf } : {}),
    stopApps: () => apps.stopAll(),
    logger,
  });
  // After the runtime's own end waiters: a Dial's outcome does not wait for the callbacks.
  bus.subscribe(statusCallbacks(sendCallback, d.instanceId));
  for (const observer of d.observers ?? []) bus.subscribe(observer);
  const live = runtime;
  bus.subscribe(transferEnds((sid, event) => live.send(sid, event)));
  legs = new LegControl(live, d.media);
  const inbound = new InboundCalls(live, {
    sip: d.sip,
    routeInbound: d.routeInbound,
    notify: d.notify,
    logger,
  });
  const recovery = new CallRecovery({
    calls: d.calls,
    snapshots: d.snapshots,
    sip: d.sip,
    claim: live.claim,
    restore: (persisted) => {
      const restored = live.restore(persisted);
      const sid = (persisted as { context?: { origin?: { sid?: string } } }).context?.origin?.sid;
      if (restored && sid) snapshots.adopt(sid);
      return restored;
    },
    isLive: (sid) => live.liveStatus(sid) !== null,
    sendCallback,
    numberOf: d.numberOf,
    instanceId: d.instanceId,
    logger,
  });
  return { runtime: live, legs, inbound, recovery, bus, snapshots };
}
