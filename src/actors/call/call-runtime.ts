/**
 * The call runtime: the node-local registry of call actors (STYLE: "runtime.ts — registry of live
 * actors by sid"). It spawns an actor for a routed INVITE, a REST call or a `<Dial>` leg, routes SIP,
 * media, REST and app inputs to the actor of their sid as events, publishes what the actors emit on
 * the call event bus, and evicts an actor once it has ended. The call logic is the machine's
 * (call.machine.ts); what follows a call is the observers' (call-observers.ts).
 */
import { type Actor, createActor } from 'xstate';
import { AppError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { MediaEvent, MediaPort } from '../../media/port.js';
import { parseCallTarget, type SipEvent, type SipPort, TargetError } from '../../sip/port.js';
import { type CallClaim, type CallRecord, CallStatus, type CallStore } from '../../store/call-store.js';
import type { HttpMethod } from '../../webhooks/index.js';
import type { ParticipantView } from '../interpreter/verbs/conference-rooms.js';
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
import type { CallEnd } from './leg-control.js';
import { answeredSeconds, inputOf, newRecord } from './records.js';
import { callEventOf } from './sip-events.js';

export type { OutboundCallRequest } from './call.types.js';
export type { CallEnd, ChildLeg } from './leg-control.js';

export type CallActor = Actor<CallMachine>;

export interface CallRuntimeDeps {
  readonly sip: Pick<SipPort, 'answerRefer'> & { onEvent(listener: (e: SipEvent) => void): () => void };
  readonly media: Pick<MediaPort, 'subscribe'>;
  readonly machine: CallMachine;
  readonly bus: CallEventBus;
  readonly calls: Pick<CallStore, 'insert'>;
  readonly instanceId: string;
  /** This node's claim on its live calls lasts this long unrenewed (CALL_LEASE_SECONDS). */
  readonly callLeaseMs: number;
  /** The conference attributes a leg's endpoint joined with (`<Conference>`), when it is in a room. */
  readonly conferenceFlagsOf?: (endpointId: string) => ParticipantView | null;
  /** Stops what runs the calls (shutdown). */
  readonly stopApps: () => void;
  readonly logger: Logger;
}

const DRAIN_POLL_MS = 100;
/** How long the calls a drain ended get to send their BYEs and callbacks. */
const DRAIN_END_WAIT_MS = 5_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class CallRuntime {
  private readonly actors = new ActorRegistry<CallActor>();
  private readonly endWaiters = new Map<string, (end: CallEnd) => void>();
  private readonly unsubscribe: Array<() => void> = [];
  private isStopped = false;
  private isDraining = false;
  readonly claim: CallClaim;
  readonly machine: CallMachine;

  constructor(private readonly deps: CallRuntimeDeps) {
    this.claim = { node: deps.instanceId, leaseMs: deps.callLeaseMs };
    this.machine = deps.machine;
    this.unsubscribe.push(deps.sip.onEvent((e) => this.onSipEvent(e)));
    this.unsubscribe.push(deps.media.subscribe((e) => this.onMediaEvent(e)));
    // After the CDR writer: a leg's end is announced to its Dialer once its record is closed.
    this.unsubscribe.push(
      deps.bus.subscribe((e) => {
        if (e.type !== 'call.ended') return;
        const waiter = this.endWaiters.get(e.call.origin.sid);
        this.endWaiters.delete(e.call.origin.sid);
        waiter?.({
          status: e.status,
          durationSeconds: e.duration,
          sipStatus: e.sipStatus,
          sipCallId: e.call.sip.finalResponse?.callId ?? null,
          sipHeaders: e.call.sip.finalResponse?.headers ?? {},
        });
      }),
    );
  }

  get stopped(): boolean {
    return this.isStopped;
  }

  actorOf(sid: string): CallActor | undefined {
    return this.actors.get(sid);
  }

  /** Writes a new call's record, claimed by this node. */
  insert(record: CallRecord): Promise<void> {
    return this.deps.calls.insert(record, { claim: this.claim });
  }

  /** Resolves with how the leg ended, once its record is closed. */
  onEnded(sid: string, resolve: (end: CallEnd) => void): void {
    this.endWaiters.set(sid, resolve);
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

  /**
   * What the live actor knows of a call ahead of its record (the record is written after the
   * actor moves): its status, answer and end; null when the call is not live on this node.
   */
  liveFields(
    sid: string,
  ):
    | (Pick<CallRecord, 'status' | 'startTime' | 'sipResponseCode'> &
        Partial<Pick<CallRecord, 'endTime' | 'duration'>>)
    | null {
    const s = this.actors.get(sid)?.getSnapshot();
    if (!s) return null;
    const c = s.context;
    const ended = s.status === 'done' && c.endedAt !== null;
    return {
      status: statusOf(s),
      startTime: c.answeredAt === null ? null : new Date(c.answeredAt),
      sipResponseCode: c.sip.outcome?.status ?? null,
      ...(ended
        ? {
            endTime: new Date(c.endedAt as number),
            duration: answeredSeconds(c.answeredAt, c.endedAt as number),
          }
        : {}),
    };
  }

  /** The live call's persisted snapshot (what a snapshot writer stores), or null. */
  persistedOf(sid: string): unknown | null {
    return this.actors.get(sid)?.getPersistedSnapshot() ?? null;
  }

  /** Creates a REST call: validates the target (400), writes the record queued, then spawns it. */
  async createOutbound(request: OutboundCallRequest): Promise<CallRecord> {
    if (this.isStopped || this.isDraining) throw new AppError('Unavailable', 'The service is shutting down');
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

  /** Live view used by the REST modification response. */
  liveView(sid: string) {
    const c = this.contextOf(sid);
    if (!c) return null;
    const flags = this.deps.conferenceFlagsOf?.(sid) ?? null;
    return {
      room: c.media.room ?? flags?.room ?? null,
      conferenceSid: flags?.conferenceSid ?? null,
      hold: flags?.hold ?? false,
      muted: c.media.muted,
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
      this.send(peer.origin.parentCallSid === sid ? peer.origin.sid : sid, { type: 'app.detach' });
      this.send(peer.origin.sid, { type: 'http.move', to, unbridge: false });
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

  // ---- restore ---------------------------------------------------------------------------------

  /**
   * Restores a call from its persisted snapshot (a node that died) and tells it so: it resumes what
   * it can and ends what it cannot with the right callbacks (call.machine.ts).
   */
  restore(persisted: unknown): boolean {
    const snapshot = persisted as CallSnapshot;
    const sid = snapshot?.context?.origin?.sid;
    if (!sid || snapshot.status !== 'active' || this.actors.get(sid)) return false;
    // The input is ignored: the actor starts from the snapshot.
    this.start(createActor(this.deps.machine, { snapshot, input: snapshot.context.origin }), sid);
    this.send(sid, { type: 'call.restored', at: Date.now() });
    return true;
  }

  get draining(): boolean {
    return this.isDraining;
  }

  /**
   * Graceful stop: takes no new REST calls, lets the live ones run until they end or `timeoutMs`
   * passes, then ends the rest as Status=completed would (BYE or CANCEL, callbacks, records), and
   * waits a bounded time for them to close. Resolves with how many were ended that way.
   */
  async drain(timeoutMs: number): Promise<number> {
    this.isDraining = true;
    const deadline = Date.now() + timeoutMs;
    while (this.actors.size > 0 && Date.now() < deadline) await sleep(DRAIN_POLL_MS);
    const left = [...this.actors.keys()];
    for (const sid of left) this.end(sid);
    const closeBy = Date.now() + DRAIN_END_WAIT_MS;
    while (this.actors.size > 0 && Date.now() < closeBy) await sleep(DRAIN_POLL_MS);
    return left.length;
  }

  /** Stops every actor (no callbacks); idempotent. Live SIP legs are ended by the SIP service. */
  stop(): void {
    if (this.isStopped) return;
    this.isStopped = true;
    for (const u of this.unsubscribe) u();
    this.deps.stopApps();
    this.actors.stopAll();
  }

  // ---- inputs → actors -------------------------------------------------------------------------

  send(sid: string, event: CallEvent): boolean {
    const actor = this.actors.get(sid);
    if (!actor) return false;
    actor.send(event);
    return true;
  }

  sendIfCan(sid: string, event: CallEvent): boolean {
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
      // A dialog whose call has ended here (or never had an actor): nothing to transfer.
      if (e.type === 'sip.refer')
        this.deps.sip.answerRefer(e.legId, e.referId, 404, 'SIP Refer failed: no call in progress');
      return;
    }
    const event = callEventOf(e, Date.now());
    if (event) this.send(e.legId, event);
  }

  private onMediaEvent(e: MediaEvent): void {
    // An inbound leg's endpoint (an outbound leg's is awaited while it is placed: no transition).
    if (e.type === 'media.endpointReady') {
      this.send(e.endpoint.endpointId, { type: 'media.endpointReady', sdp: e.endpoint.sdp, at: Date.now() });
    } else if (e.type === 'media.endpointFailed') {
      this.send(e.endpointId, { type: 'media.endpointFailed', reason: e.reason, at: Date.now() });
    } else if (e.type === 'media.conferenceJoined' || e.type === 'media.conferenceLeft') {
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

  // ---- lifecycle -------------------------------------------------------------------------------

  spawn(input: CallInput): void {
    this.start(createActor(this.deps.machine, { input }), input.sid);
  }

  /** Registers and starts an actor (listeners attached before, so nothing it emits is missed). */
  start(actor: CallActor, sid: string): void {
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
