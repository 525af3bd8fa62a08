/**
 * The call runtime: the node-local registry of call leg actors and the wiring between them and the
 * world (STYLE: "runtime.ts — registry of live actors by sid, wiring of emitted events").
 *
 * - REST calls (`POST /Calls`): the record is written (status queued) before the API answers; the
 *   call waits for admission (per-account CPS and concurrency, FIFO), then the actor dials through
 *   the SIP port with the outbound routing policy (multi-provider proxy, `client:` via the
 *   registrar, `sip:` direct).
 * - SIP port events are fed to the actor whose sid is the leg id; the actor's emitted commands go
 *   back to the SIP port. Every REST-visible status change updates the call record and sends the
 *   call progress callbacks asked for; `call.ended` (exactly once) closes the record, releases the
 *   admission slot and evicts the actor.
 * - Live modification: Status=canceled (queued or ringing only), Status=completed (any live call).
 *
 * Seams for the parts that land separately: `media.offer()` gives the SDP offer of a new leg (the
 * media engine), `onAnswered()` starts the markup interpreter on `Url`.
 */
import { type Actor, createActor } from 'xstate';
import { AppError } from '../../errors.js';
import { newSid, SidPrefix } from '../../ids.js';
import type { Logger } from '../../logger.js';
import type { MultiProviderConfig } from '../../profiles/multi-provider.js';
import type { SipEvent, SipPort } from '../../sip/port.js';
import { NoRouteError, parseCallTarget, planOutgoingRequest, TargetError } from '../../sip/routing-policy.js';
import { type CallRecord, CallStatus, type CallStore } from '../../store/call-store.js';
import type { SnapshotStore } from '../../store/snapshot-store.js';
import type { HttpMethod, WebhookRequest, WebhookResult } from '../../webhooks/types.js';
import { ActorRegistry } from '../runtime.js';
import type { CallAdmission } from './admission.js';
import { callMachine, statusOf } from './call.machine.js';
import type { CallEmitted, CallEvent } from './call.types.js';
import { type ProgressEvent, progressEventOf, progressParams } from './status-callbacks.js';

type CallActor = Actor<typeof callMachine>;

/** What a REST client asked for in `POST /Calls` (validated by the route). */
export interface OutboundCallRequest {
  readonly accountSid: string;
  readonly apiVersion: string;
  readonly from: string;
  readonly to: string;
  readonly url: string;
  readonly method: HttpMethod;
  readonly fallbackUrl: string | null;
  readonly fallbackMethod: HttpMethod;
  readonly statusCallback: string | null;
  readonly statusCallbackMethod: HttpMethod;
  readonly statusCallbackEvents: ReadonlySet<ProgressEvent>;
  readonly timeoutSeconds: number;
}

/** Per-call data that is not the machine's: what the REST client asked for, callback sequence. */
interface Session {
  readonly record: CallRecord;
  request: OutboundCallRequest | null;
  sequence: number;
  readonly admission: AbortController;
  admitted: boolean;
  /** Record updates and callbacks of one call run in order (a pool may reorder queries). */
  chain: Promise<unknown>;
  readonly log: Logger;
}

export interface CallRuntimeDeps {
  readonly sip: SipPort & { onEvent(listener: (e: SipEvent) => void): () => void };
  readonly calls: CallStore;
  readonly snapshots: SnapshotStore;
  readonly admission: CallAdmission;
  readonly webhooks: { request(req: WebhookRequest): Promise<WebhookResult> };
  /** The account's AuthToken (signs its webhooks). */
  readonly authTokenOf: (accountSid: string) => Promise<string | null>;
  readonly multiProviderOf: (accountSid: string) => Promise<MultiProviderConfig | null>;
  /** Registered contacts of a client of the account's organization (location lookup). */
  readonly locateClient: (accountSid: string, login: string) => Promise<string[]>;
  /** SIP host advertised in From of outbound calls. */
  readonly sipHost: string;
  /** Platform default outbound proxy for numbers (SIP_OUTBOUND_PROXY). */
  readonly defaultProxy: string | null;
  /** The SDP offer of a new outbound leg (the media engine's endpoint). */
  readonly media: { offer(callSid: string): Promise<string>; release(callSid: string): void };
  /** The call was answered: run its markup (the interpreter). */
  readonly onAnswered?: (call: CallRecord, request: OutboundCallRequest | null) => void;
  readonly logger: Logger;
}

/** Live call snapshots outlive a crashed node by this much (seconds). */
const SNAPSHOT_TTL_SECONDS = 6 * 3600;

export class CallRuntime {
  private readonly actors = new ActorRegistry<CallActor>();
  private readonly sessions = new Map<string, Session>();
  private readonly unsubscribe: () => void;
  private stopped = false;

  constructor(private readonly deps: CallRuntimeDeps) {
    this.unsubscribe = deps.sip.onEvent((e) => this.onSipEvent(e));
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

  /**
   * Creates a REST call: validates the target (TargetError → 400), writes the record with status
   * queued, then admits and dials in the background. Resolves with the record as written.
   */
  async createOutbound(request: OutboundCallRequest): Promise<CallRecord> {
    if (this.stopped) throw new AppError('Unavailable', 'The service is shutting down');
    try {
      parseCallTarget(request.to);
    } catch (e) {
      if (e instanceof TargetError) throw new AppError('InvalidParameter', `To: ${e.message}`);
      throw e;
    }
    const now = new Date();
    const record: CallRecord = {
      sid: newSid(SidPrefix.Call),
      parentCallSid: null,
      accountSid: request.accountSid,
      to: request.to,
      from: request.from,
      phoneNumberSid: null,
      status: CallStatus.Queued,
      startTime: null,
      endTime: null,
      duration: null,
      price: null,
      priceUnit: 'USD',
      direction: 'outbound-api',
      answeredBy: null,
      apiVersion: request.apiVersion,
      forwardedFrom: null,
      callerName: null,
      sipCallId: null,
      dateCreated: now,
      dateUpdated: now,
    };
    await this.deps.calls.insert(record);
    const session: Session = {
      record,
      request,
      sequence: 0,
      admission: new AbortController(),
      admitted: false,
      chain: Promise.resolve(),
      log: this.deps.logger.child({ callSid: record.sid, accountSid: record.accountSid }),
    };
    this.start(record, session, request.timeoutSeconds);
    void this.admitAndDial(record.sid, session);
    return record;
  }

  /**
   * Live modification by status (spec §Call state table): `canceled` affects only a queued or
   * ringing call, `completed` ends any live call. A call that is not live here → 409/404 by the caller.
   */
  modifyStatus(sid: string, status: 'canceled' | 'completed'): { changed: boolean; live: boolean } {
    const actor = this.actors.get(sid);
    if (!actor) return { changed: false, live: false };
    const event: CallEvent =
      status === 'canceled'
        ? { type: 'http.cancel', at: Date.now() }
        : { type: 'http.complete', at: Date.now() };
    const changed = actor.getSnapshot().can(event);
    if (changed) actor.send(event);
    return { changed, live: true };
  }

  /** Stops every actor (no callbacks); idempotent. Live SIP legs are ended by the SIP service. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribe();
    for (const s of this.sessions.values()) s.admission.abort(new AppError('Unavailable', 'shutting down'));
    this.actors.stopAll();
    this.sessions.clear();
  }

  // ---- lifecycle ------------------------------------------------------------------------------

  private start(record: CallRecord, session: Session, timeoutSeconds?: number): void {
    const actor = createActor(callMachine, {
      input: {
        sid: record.sid,
        accountSid: record.accountSid,
        direction: record.direction,
        from: record.from,
        to: record.to,
        parentCallSid: record.parentCallSid,
        ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
        createdAt: record.dateCreated.getTime(),
      },
    });
    this.sessions.set(record.sid, session);
    actor.on('*', (e) => this.onEmitted(e as CallEmitted, session));
    actor.subscribe({
      next: () => this.persist(record.sid, actor),
      error: (err) => session.log.error({ err }, 'call actor failed'),
    });
    this.actors.set(record.sid, actor);
    actor.start();
  }

  private persist(sid: string, actor: CallActor): void {
    if (actor.getSnapshot().status !== 'active') return;
    this.deps.snapshots.save('call', sid, actor.getPersistedSnapshot(), SNAPSHOT_TTL_SECONDS).catch((err) => {
      this.sessions.get(sid)?.log.warn({ err }, 'call snapshot not saved');
    });
  }

  private async admitAndDial(sid: string, session: Session): Promise<void> {
    try {
      await this.deps.admission.admit(session.record.accountSid, sid, session.admission.signal);
      session.admitted = true;
    } catch (err) {
      // Canceled while queued (the actor already ended) or the service stopped.
      session.log.debug({ err }, 'call left the admission queue');
      return;
    }
    const actor = this.actors.get(sid);
    if (!actor || actor.getSnapshot().status !== 'active') {
      await this.releaseSlot(session);
      return;
    }
    actor.send({ type: 'call.dial', at: Date.now() });
  }

  private async releaseSlot(session: Session): Promise<void> {
    if (!session.admitted) return;
    session.admitted = false;
    await this.deps.admission.release(session.record.accountSid, session.record.sid).catch((err) => {
      session.log.warn({ err }, 'admission slot not released');
    });
  }

  // ---- SIP → actor ----------------------------------------------------------------------------

  private onSipEvent(e: SipEvent): void {
    if (!('legId' in e)) return;
    const actor = this.actors.get(e.legId);
    if (!actor) return;
    const at = Date.now();
    switch (e.type) {
      case 'sip.ringing':
        actor.send({ type: 'sip.ringing', at });
        return;
      case 'sip.answered':
        actor.send({ type: 'sip.answered', at });
        return;
      case 'sip.failed':
        actor.send({ type: 'sip.failed', status: e.status, at });
        return;
      case 'sip.bye':
        actor.send({ type: 'sip.bye', at });
        return;
      case 'sip.cancel':
        actor.send({ type: 'sip.cancel', at });
        return;
      default:
        return;
    }
  }

  // ---- actor → world --------------------------------------------------------------------------

  private onEmitted(e: CallEmitted, session: Session): void {
    switch (e.type) {
      case 'sip.placeCall':
        void this.placeCall(session);
        return;
      case 'sip.cancel':
        this.deps.sip.cancel(e.callSid);
        return;
      case 'sip.hangUp':
        this.deps.sip.hangUp(e.callSid);
        return;
      case 'sip.reject':
        this.deps.sip.reject(e.callSid, e.status);
        return;
      case 'sip.answer':
        return;
      case 'call.status':
        this.inOrder(session, () => this.onStatus(session, e.status, e.at));
        return;
      case 'call.ended':
        this.inOrder(session, () => this.onEnded(session, e.status, e.at, e.duration));
        return;
    }
  }

  private async placeCall(session: Session): Promise<void> {
    const { record } = session;
    const sid = record.sid;
    const fail = (status: number, message: string) => {
      session.log.info({ status, message }, 'call not placed');
      this.actors.get(sid)?.send({ type: 'sip.failed', status, at: Date.now() });
    };
    try {
      const target = parseCallTarget(record.to);
      const [multiProvider, clientContacts, sdp] = await Promise.all([
        this.deps.multiProviderOf(record.accountSid),
        target.kind === 'client'
          ? this.deps.locateClient(record.accountSid, target.name)
          : Promise.resolve([]),
        this.deps.media.offer(sid),
      ]);
      const plan = planOutgoingRequest({
        target,
        clientContacts,
        multiProvider,
        ...(this.deps.defaultProxy ? { defaultProxy: this.deps.defaultProxy } : {}),
      });
      const fromUser = record.from.replace(/^client:/, '');
      this.deps.sip.placeCall(sid, {
        requestUri: plan.requestUri,
        from: { uri: `sip:${encodeURIComponent(fromUser)}@${this.deps.sipHost}` },
        to: { uri: plan.requestUri },
        route: plan.route,
        headers: plan.headers,
        ...(plan.credentials ? { credentials: plan.credentials } : {}),
        sdp,
      });
      const at = Date.now();
      this.inOrder(session, () => this.sendProgress(session, 'initiated', at));
    } catch (e) {
      if (e instanceof NoRouteError) fail(e.reason === 'client-not-registered' ? 404 : 503, e.message);
      else if (e instanceof TargetError) fail(400, e.message);
      else {
        session.log.error({ err: e }, 'placing the call failed');
        fail(500, 'internal error');
      }
    }
  }

  private async onStatus(session: Session, status: CallStatus, at: number): Promise<void> {
    const patch = status === CallStatus.InProgress ? { status, startTime: new Date(at) } : { status };
    const updated = await this.deps.calls.update(session.record.sid, patch).catch((err) => {
      session.log.warn({ err }, 'call record not updated');
      return null;
    });
    if (status === CallStatus.InProgress) this.deps.onAnswered?.(updated ?? session.record, session.request);
    await this.sendProgress(session, status, at);
  }

  private async onEnded(session: Session, status: CallStatus, at: number, duration: number): Promise<void> {
    const sid = session.record.sid;
    session.admission.abort(new AppError('Conflict', 'call ended'));
    this.deps.media.release(sid);
    await Promise.all([
      this.deps.calls
        .update(sid, { status, endTime: new Date(at), duration })
        .catch((err) => session.log.warn({ err }, 'call record not closed')),
      this.releaseSlot(session),
      this.deps.snapshots.delete('call', sid).catch(() => {}),
    ]);
    session.log.info({ status, duration }, 'call ended');
    await this.sendProgress(session, status, at, duration);
    this.sessions.delete(sid);
    this.actors.evict(sid);
  }

  private inOrder(session: Session, step: () => Promise<void>): void {
    session.chain = session.chain.then(step).catch((err) => session.log.error({ err }, 'call step failed'));
  }

  /** Sends a call progress callback when the REST client asked for that event. */
  private async sendProgress(
    session: Session,
    status: CallStatus | 'initiated',
    at: number,
    duration?: number,
  ): Promise<void> {
    const request = session.request;
    if (!request?.statusCallback) return;
    const event = status === 'initiated' ? 'initiated' : progressEventOf(status);
    if (!request.statusCallbackEvents.has(event)) return;
    const authToken = await this.deps.authTokenOf(session.record.accountSid);
    if (authToken === null) return;
    const params = progressParams(session.record, status, session.sequence++, at, duration);
    await this.deps.webhooks.request({
      url: request.statusCallback,
      method: request.statusCallbackMethod,
      params: Object.entries(params),
      accountSid: session.record.accountSid,
      authToken,
      context: { callSid: session.record.sid },
    });
  }
}

/**
 * The SDP offer of a leg without a media endpoint (PCMU/PCMA/telephone-event, `a=inactive`): used
 * until the media engine is composed in, and for signalling-only benchmarks.
 */
export function signallingOnlyOffer(host: string): string {
  const ip = host.includes(':') ? 'IP6' : 'IP4';
  const id = Date.now();
  return [
    'v=0',
    `o=switchboard ${id} ${id} IN ${ip} ${host}`,
    's=switchboard',
    `c=IN ${ip} ${host}`,
    't=0 0',
    'm=audio 9 RTP/AVP 0 8 101',
    'a=rtpmap:0 PCMU/8000',
    'a=rtpmap:8 PCMA/8000',
    'a=rtpmap:101 telephone-event/8000',
    'a=fmtp:101 0-15',
    'a=inactive',
    '',
  ].join('\r\n');
}
