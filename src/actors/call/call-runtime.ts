/**
 * The call runtime: the node-local registry of call actors (STYLE: "runtime.ts — registry of live
 * actors by sid"). It spawns an actor for a routed INVITE, a REST call or a `<Dial>` leg, routes SIP,
 * media, REST and app inputs to the actor of their sid as events, publishes what the actors emit on
 * the call event bus, and evicts an actor once it has ended. The call logic is the machine's
 * (call.machine.ts); what follows a call is the observers' (call-observers.ts).
 */
import { type Actor, createActor, waitFor } from 'xstate';
import { AppError } from '../../errors.js';
import { newSid, SidPrefix } from '../../ids.js';
import type { Logger } from '../../logger.js';
import type { MediaEvent, MediaPort } from '../../media/port.js';
import type { NotifyInput } from '../../notifications/notifier.js';
import { sipUserAndHost } from '../../numbers/address.js';
import {
  type InboundInvite,
  parseCallTarget,
  persistedDialog,
  type SipEvent,
  type SipPort,
  TargetError,
} from '../../sip/port.js';
import { type CallClaim, type CallRecord, CallStatus, type CallStore } from '../../store/call-store.js';
import type { HttpMethod } from '../../webhooks/index.js';
import { DEFAULT_API_VERSION } from '../interpreter/interpreter.types.js';
import type { ParticipantFlags } from '../interpreter/verbs/conference-rooms.js';
import { ActorRegistry } from '../runtime.js';
import type { CallMachine, CallSnapshot } from './call.machine.js';
import { statusOf } from './call.machine.js';
import type {
  CallContext,
  CallEmitted,
  CallEvent,
  CallInput,
  MarkupTarget,
  OutboundCallRequest,
} from './call.types.js';
import type { CallEventBus } from './call-observers.js';
import type { InboundRoute } from './inbound-routing.js';

export type { OutboundCallRequest } from './call.types.js';

type CallActor = Actor<CallMachine>;

/** How a leg ended. */
export interface CallEnd {
  readonly status: CallStatus;
  readonly durationSeconds: number;
  readonly sipStatus: number | null;
}

/** A `<Dial>` child leg as the Dialer sees it. */
export interface ChildLeg {
  readonly sid: string;
  /** Resolves true when answered, false when it ended first. */
  readonly answered: Promise<boolean>;
  /** Resolves once the leg's record is closed. */
  readonly ended: Promise<CallEnd>;
  hangUp(): void;
  /**
   * Runs markup on the answered leg before it is bridged (Dial noun `url`, the "whisper"); resolves
   * true when the document ended with the leg still up, false when the leg ended.
   */
  whisper(url: string, method: HttpMethod): Promise<boolean>;
}

export interface CallRuntimeDeps {
  readonly sip: Pick<SipPort, 'reject'> & {
    onEvent(listener: (e: SipEvent) => void): () => void;
    /** A rejection of the handler's promise ends that leg (500) in the SIP adapter. */
    onInvite(handler: (invite: InboundInvite) => void | Promise<void>): void;
  };
  readonly media: Pick<MediaPort, 'subscribe' | 'bridge'>;
  readonly machine: CallMachine;
  readonly bus: CallEventBus;
  readonly calls: Pick<CallStore, 'insert'>;
  readonly routeInbound: (invite: InboundInvite) => Promise<InboundRoute>;
  readonly notify: (input: NotifyInput) => unknown;
  readonly instanceId: string;
  /** This node's claim on its live calls lasts this long unrenewed (CALL_LEASE_SECONDS). */
  readonly callLeaseMs: number;
  /** The conference attributes a leg's endpoint joined with (`<Conference>`), when it is in a room. */
  readonly conferenceFlagsOf?: (endpointId: string) => ParticipantFlags | null;
  /** Stops what runs the calls (shutdown). */
  readonly stopApps: () => void;
  readonly logger: Logger;
}

export class CallRuntime {
  private readonly actors = new ActorRegistry<CallActor>();
  /** Inbound legs that ended while they were being routed. */
  private readonly goneEarly = new Set<string>();
  private readonly routing = new Set<string>();
  private readonly endWaiters = new Map<string, (end: CallEnd) => void>();
  private readonly unsubscribe: Array<() => void> = [];
  private stopped = false;
  readonly claim: CallClaim;

  constructor(private readonly deps: CallRuntimeDeps) {
    this.claim = { node: deps.instanceId, leaseMs: deps.callLeaseMs };
    this.unsubscribe.push(deps.sip.onEvent((e) => this.onSipEvent(e)));
    this.unsubscribe.push(deps.media.subscribe((e) => this.onMediaEvent(e)));
    // After the CDR writer: a leg's end is announced to its Dialer once its record is closed.
    this.unsubscribe.push(
      deps.bus.subscribe((e) => {
        if (e.type !== 'call.ended') return;
        const waiter = this.endWaiters.get(e.call.sid);
        this.endWaiters.delete(e.call.sid);
        waiter?.({ status: e.status, durationSeconds: e.duration, sipStatus: e.sipStatus });
      }),
    );
    deps.sip.onInvite((invite) => this.onInvite(invite));
  }

  /** Live calls on this node. */
  get size(): number {
    return this.actors.size;
  }

  /** The REST status of a live call on this node, or null. */
  liveStatus(sid: string): CallStatus | null {
    const actor = this.actors.get(sid);
    return actor ? statusOf(actor.getSnapshot()) : null;
  }

  /** The live call on this node, or null. */
  contextOf(sid: string): CallContext | null {
    return this.actors.get(sid)?.getSnapshot().context ?? null;
  }

  /** The live call's persisted snapshot (what a snapshot writer stores), or null. */
  persistedOf(sid: string): unknown | null {
    return this.actors.get(sid)?.getPersistedSnapshot() ?? null;
  }

  /** Creates a REST call: validates the target (400), writes the record queued, then spawns it. */
  async createOutbound(request: OutboundCallRequest): Promise<CallRecord> {
    if (this.stopped) throw new AppError('Unavailable', 'The service is shutting down');
    try {
      parseCallTarget(request.to);
    } catch (e) {
      if (e instanceof TargetError) throw new AppError('InvalidParameter', e.reason);
      throw e;
    }
    const record = newRecord({
      accountSid: request.accountSid,
      from: request.from,
      to: request.to,
      direction: 'outbound-api',
      status: CallStatus.Queued,
      apiVersion: request.apiVersion,
    });
    const progress = request.statusCallback
      ? {
          url: request.statusCallback,
          method: request.statusCallbackMethod,
          events: [...request.statusCallbackEvents],
        }
      : null;
    await this.deps.calls.insert(record, { claim: this.claim, statusCallback: progress });
    this.spawn({
      ...inputOf(record),
      timeoutSeconds: request.timeoutSeconds,
      markup: {
        url: request.url,
        method: request.method,
        fallbackUrl: request.fallbackUrl,
        fallbackMethod: request.fallbackMethod,
      },
      progress,
    });
    return record;
  }

  /** Places a `<Dial>` child leg (outbound-dial) of `parentSid`; not subject to REST admission. */
  async dialChild(
    parentSid: string,
    to: string,
    opts: {
      readonly callerId: string;
      readonly timeoutSeconds: number;
      readonly credentials?: { readonly username: string; readonly password: string } | null;
    },
  ): Promise<ChildLeg> {
    const parent = this.contextOf(parentSid);
    if (!parent) throw new AppError('Conflict', `Call ${parentSid} is not live`);
    const record = newRecord({
      accountSid: parent.accountSid,
      from: opts.callerId,
      to,
      direction: 'outbound-dial',
      status: CallStatus.Queued,
      apiVersion: parent.apiVersion,
      parentCallSid: parentSid,
    });
    await this.deps.calls.insert(record, { claim: this.claim });
    const ended = new Promise<CallEnd>((resolve) => this.endWaiters.set(record.sid, resolve));
    const actor = createActor(this.deps.machine, {
      input: {
        ...inputOf(record),
        timeoutSeconds: opts.timeoutSeconds,
        credentials: opts.credentials ?? null,
      },
    });
    // Subscribed before the actor starts: nothing it emits can be missed.
    const answered = outcome(actor, 'call.answered');
    this.start(actor, record.sid);
    return {
      sid: record.sid,
      answered,
      ended,
      hangUp: () => {
        if (!this.contextOf(record.sid)?.detached) this.end(record.sid);
      },
      whisper: (url, method) => {
        const a = this.actors.get(record.sid);
        if (!a) return Promise.resolve(false);
        const result = outcome(a, 'call.whispered');
        a.send({ type: 'app.whisper', url, method });
        return result;
      },
    };
  }

  /** Records that two legs are bridged by a `<Dial>` (null: the bridge ended). */
  setPeers(a: string, b: string | null): void {
    const at = Date.now();
    this.send(a, { type: 'app.bridged', peer: b, at });
    if (b) this.send(b, { type: 'app.bridged', peer: a, at });
  }

  /** Live view used by the REST modification response. */
  liveView(sid: string) {
    const c = this.contextOf(sid);
    if (!c) return null;
    const flags = this.deps.conferenceFlagsOf?.(sid) ?? null;
    return {
      room: c.room,
      muted: c.muted,
      // Twilio's defaults outside a conference.
      startConferenceOnEnter: flags?.startsConference ?? true,
      endConferenceOnEnter: flags?.endsConference ?? false,
    };
  }

  /** Mutes or unmutes what the leg says (bridge and conference); false when not live. */
  setMuted(sid: string, muted: boolean): boolean {
    return this.send(sid, { type: 'http.mute', muted, at: Date.now() });
  }

  /** A StatusCallback requested when the call ends (modification parameter). */
  setEndCallback(sid: string, url: string, method: HttpMethod): boolean {
    return this.send(sid, { type: 'http.endCallback', callback: { url, method } });
  }

  /**
   * MoveConnectedCallLeg: redirects the call and the leg it is bridged with to the same markup;
   * the bridge ends and each leg runs the new document on its own. The child of the Dial is
   * detached so the parent's Dial ending does not hang it up.
   */
  moveConnected(sid: string, to: MarkupTarget): boolean {
    const self = this.contextOf(sid);
    if (!self || !this.canRedirect(sid)) return false;
    const peer = self.peer ? this.contextOf(self.peer) : null;
    if (peer) {
      this.send(peer.parentCallSid === sid ? peer.sid : sid, { type: 'app.detach' });
      this.send(peer.sid, { type: 'http.move', to, unbridge: false });
    }
    return this.send(sid, { type: 'http.move', to, unbridge: true });
  }

  /** Ends a live call whatever its state (Status=completed semantics); no-op when gone. */
  end(sid: string): void {
    this.sendIfCan(sid, { type: 'http.complete', at: Date.now() });
  }

  /**
   * Live modification by status (spec §Call state table): `canceled` affects only a queued or
   * ringing call, `completed` ends any live call.
   */
  modifyStatus(sid: string, status: 'canceled' | 'completed'): { changed: boolean; live: boolean } {
    if (!this.actors.get(sid)) return { changed: false, live: false };
    const at = Date.now();
    const changed = this.sendIfCan(sid, {
      type: status === 'canceled' ? 'http.cancel' : 'http.complete',
      at,
    });
    return { changed, live: true };
  }

  /** Live modification by Url: the call's markup is replaced (REST redirect). False when not live. */
  redirect(sid: string, to: MarkupTarget): boolean {
    return this.canRedirect(sid) && this.send(sid, { type: 'http.redirect', to });
  }

  // ---- call control (the interpreter's CallControl) --------------------------------------------

  /**
   * Answers an inbound leg: its endpoint answers the caller's offer, 200 goes out, and this resolves
   * when the ACK arrives. Idempotent; rejects when the leg is gone or ends first.
   */
  async answer(sid: string, signal: AbortSignal): Promise<void> {
    const actor = this.actors.get(sid);
    if (!actor) throw new Error(`call ${sid} is not live`);
    const snap = actor.getSnapshot();
    if (statusOf(snap) === CallStatus.InProgress) return;
    if (!snap.matches('incoming') && !snap.matches('answering'))
      throw new Error(`call ${sid} cannot be answered (${statusOf(snap)})`);
    actor.send({ type: 'app.answer', at: Date.now() });
    const done = await waitFor(actor, (s) => s.context.confirmed || s.status !== 'active', {
      timeout: Number.POSITIVE_INFINITY,
      signal,
    });
    if (!done.context.confirmed) throw new Error(`call ${sid} ended before it was answered`);
  }

  /** Sends an app intent (`app.reject`, `app.hangup`) to the call actor. */
  intent(sid: string, event: Extract<CallEvent, { type: 'app.reject' | 'app.hangup' }>): void {
    this.sendIfCan(sid, event);
  }

  /** DTMF to the far end (SIP INFO); resolves when sent, or at once when the call is not up. */
  async sendDigits(sid: string, digits: string, signal: AbortSignal): Promise<void> {
    const actor = this.actors.get(sid);
    if (!actor || !this.sendIfCan(sid, { type: 'app.sendDigits', digits })) return;
    const stop = () => this.send(sid, { type: 'app.stopDigits' });
    signal.addEventListener('abort', stop, { once: true });
    try {
      await waitFor(actor, (s) => !s.matches({ inProgress: 'sendingDigits' }), {
        timeout: Number.POSITIVE_INFINITY,
      });
    } finally {
      signal.removeEventListener('abort', stop);
    }
  }

  /** A registered client called another client directly: answer once the callee answers, bridge. */
  async bridgeClient(sid: string, login: string, signal: AbortSignal): Promise<void> {
    const caller = this.contextOf(sid);
    if (!caller) return;
    try {
      const child = await this.dialChild(sid, `client:${login}`, {
        callerId: caller.from,
        timeoutSeconds: 60,
      });
      signal.addEventListener('abort', () => child.hangUp(), { once: true });
      if (!(await child.answered)) {
        const end = await child.ended;
        this.intent(sid, {
          type: 'app.reject',
          reason: end.status === 'busy' ? 'busy' : 'rejected',
          at: Date.now(),
        });
        return;
      }
      await this.answer(sid, signal);
      this.deps.media.bridge(sid, child.sid);
      await child.ended;
    } finally {
      this.intent(sid, { type: 'app.hangup', at: Date.now() });
    }
  }

  // ---- restore ---------------------------------------------------------------------------------

  /**
   * Restores a call from its persisted snapshot (a node that died) and tells it so: it resumes what
   * it can and ends what it cannot with the right callbacks (call.machine.ts).
   */
  restore(persisted: unknown): boolean {
    const snapshot = persisted as CallSnapshot;
    const sid = snapshot?.context?.sid;
    if (!sid || snapshot.status !== 'active' || this.actors.get(sid)) return false;
    // The input is ignored: the actor starts from the snapshot.
    this.start(createActor(this.deps.machine, { snapshot, input: snapshot.context }), sid);
    this.send(sid, { type: 'call.restored', at: Date.now() });
    return true;
  }

  /** Stops every actor (no callbacks); idempotent. Live SIP legs are ended by the SIP service. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const u of this.unsubscribe) u();
    this.deps.stopApps();
    this.actors.stopAll();
  }

  // ---- inputs → actors -------------------------------------------------------------------------

  private send(sid: string, event: CallEvent): boolean {
    const actor = this.actors.get(sid);
    if (!actor) return false;
    actor.send(event);
    return true;
  }

  private sendIfCan(sid: string, event: CallEvent): boolean {
    const actor = this.actors.get(sid);
    if (!actor?.getSnapshot().can(event)) return false;
    actor.send(event);
    return true;
  }

  private canRedirect(sid: string): boolean {
    const s = this.actors.get(sid)?.getSnapshot();
    return !!s && (s.context.app !== null || statusOf(s) === CallStatus.InProgress);
  }

  private onSipEvent(e: SipEvent): void {
    if (!('legId' in e)) return;
    if (!this.actors.get(e.legId)) {
      if (this.routing.has(e.legId) && (e.type === 'sip.cancel' || e.type === 'sip.ended'))
        this.goneEarly.add(e.legId);
      return;
    }
    const at = Date.now();
    switch (e.type) {
      case 'sip.ringing':
      case 'sip.bye':
      case 'sip.cancel':
        this.send(e.legId, { type: e.type, at });
        return;
      case 'sip.answered':
        this.send(e.legId, {
          type: 'sip.answered',
          at,
          dialog: persistedDialog(e.dialog),
          ...(e.sdp ? { sdp: e.sdp } : {}),
        });
        return;
      case 'sip.confirmed':
        this.send(e.legId, { type: 'sip.dialog', dialog: persistedDialog(e.dialog) });
        return;
      case 'sip.failed':
        this.send(e.legId, { type: 'sip.failed', status: e.status, reason: e.reason, at });
        return;
      case 'sip.ended':
        // A leg we did not end ourselves: no ACK for our 2xx, or its connection died.
        if (e.cause === 'ack-timeout' || e.cause === 'transport') this.send(e.legId, { type: 'sip.bye', at });
        return;
      default:
        return;
    }
  }

  private onMediaEvent(e: MediaEvent): void {
    if (e.type === 'media.conferenceJoined' || e.type === 'media.conferenceLeft') {
      this.send(e.endpointId, {
        type: 'media.room',
        room: e.type === 'media.conferenceJoined' ? e.room : null,
      });
    } else if (e.type === 'media.endpointLost' && this.actors.get(e.endpointId)) {
      this.deps.logger.warn(
        { callSid: e.endpointId, reason: e.reason },
        'media endpoint lost: ending the call',
      );
      this.sendIfCan(e.endpointId, { type: 'media.lost', reason: e.reason, at: Date.now() });
    }
  }

  private async onInvite(invite: InboundInvite): Promise<void> {
    const legId = invite.legId;
    this.routing.add(legId);
    let route: InboundRoute;
    try {
      route = this.stopped
        ? { kind: 'reject', status: 503, reason: 'Shutting Down', notify: null }
        : await this.deps.routeInbound(invite);
    } catch (err) {
      this.deps.logger.error({ err, legId }, 'inbound routing failed');
      route = { kind: 'reject', status: 500, reason: 'Server Internal Error', notify: null };
    } finally {
      this.routing.delete(legId);
    }
    if (this.goneEarly.delete(legId)) return;
    if (route.kind === 'reject') {
      this.deps.sip.reject(legId, route.status, route.reason);
      if (route.notify)
        this.deps.notify({
          accountSid: route.notify.accountSid,
          errorCode: route.notify.errorCode,
          messageText: `Call to ${invite.requestUri} rejected: ${route.reason}`,
        });
      return;
    }
    const markup = route.kind === 'markup' ? route : null;
    const record = newRecord({
      sid: legId,
      accountSid: route.accountSid,
      from: route.from,
      to: route.to,
      direction: 'inbound',
      status: CallStatus.Ringing,
      apiVersion: markup ? markup.apiVersion : DEFAULT_API_VERSION,
      phoneNumberSid: markup?.number?.sid ?? null,
      callerName: invite.from.displayName ?? null,
      forwardedFrom: forwardedFrom(invite),
      sipCallId: invite.callId,
    });
    await this.deps.calls.insert(record, { claim: this.claim });
    const n = markup?.number;
    this.spawn({
      ...inputOf(record),
      remoteSdp: invite.sdp,
      numberCallback: n?.statusCallback ? { url: n.statusCallback, method: n.statusCallbackMethod } : null,
      app: markup
        ? {
            kind: 'markup',
            url: markup.url,
            method: markup.method,
            fallbackUrl: markup.fallbackUrl,
            fallbackMethod: markup.fallbackMethod,
            answered: false,
          }
        : route.kind === 'client'
          ? { kind: 'client', login: route.login }
          : null,
    });
  }

  // ---- lifecycle -------------------------------------------------------------------------------

  private spawn(input: CallInput): void {
    this.start(createActor(this.deps.machine, { input }), input.sid);
  }

  private start(actor: CallActor, sid: string): void {
    actor.on('*', (e) => {
      const event = e as CallEmitted;
      this.deps.bus.publish(event);
      if (event.type === 'call.ended') queueMicrotask(() => this.actors.evict(sid));
    });
    actor.subscribe({ error: (err) => this.deps.logger.error({ err, callSid: sid }, 'call actor failed') });
    this.actors.set(sid, actor);
    actor.start();
  }
}

/** Resolves true on `type`, false when the call ends first. */
function outcome(actor: CallActor, type: 'call.answered' | 'call.whispered'): Promise<boolean> {
  return new Promise((resolve) => {
    const subs = [actor.on(type, () => settle(true)), actor.on('call.ended', () => settle(false))];
    function settle(v: boolean) {
      for (const s of subs) s.unsubscribe();
      resolve(v);
    }
  });
}

function inputOf(r: CallRecord): CallInput {
  return {
    sid: r.sid,
    accountSid: r.accountSid,
    direction: r.direction as CallInput['direction'],
    from: r.from,
    to: r.to,
    apiVersion: r.apiVersion,
    createdAt: r.dateCreated.getTime(),
    parentCallSid: r.parentCallSid,
    phoneNumberSid: r.phoneNumberSid,
    callerName: r.callerName,
    forwardedFrom: r.forwardedFrom,
  };
}

function newRecord(
  r: Pick<CallRecord, 'accountSid' | 'from' | 'to' | 'direction' | 'status' | 'apiVersion'> &
    Partial<CallRecord>,
): CallRecord {
  const now = new Date();
  return {
    sid: newSid(SidPrefix.Call),
    parentCallSid: null,
    phoneNumberSid: null,
    startTime: null,
    endTime: null,
    duration: null,
    price: null,
    priceUnit: 'USD',
    answeredBy: null,
    forwardedFrom: null,
    callerName: null,
    sipCallId: null,
    sipResponseCode: null,
    dateCreated: now,
    dateUpdated: now,
    ...r,
  };
}

/** The number the call was forwarded from (Diversion, RFC 5806), when present. */
function forwardedFrom(invite: InboundInvite): string | null {
  const d = invite.headers.diversion;
  if (!d) return null;
  return sipUserAndHost(d)?.user ?? null;
}
