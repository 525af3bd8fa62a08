/**
 * The call runtime: the node-local registry of call leg actors and the wiring between them and the
 * world (STYLE: "runtime.ts — registry of live actors by sid, wiring of emitted events").
 *
 * - Inbound: an INVITE is routed (inbound-routing.ts); a routed call gets a record (ringing), an
 *   actor, a 180 and a markup interpreter. Rejected INVITEs get their SIP status and, where the
 *   spec asks, a Notification.
 * - REST calls (`POST /Calls`): the record is written (status queued) before the API answers; the
 *   call waits for admission (per-account CPS and concurrency, FIFO), then dials through the SIP
 *   port with the outbound routing policy. Its Url runs once it is answered.
 * - `<Dial>` children (outbound-dial) are placed by the Dialer (call-control.ts) with this runtime.
 * - SIP port events are fed to the actor whose sid is the leg id; the actor's emitted commands go
 *   back to the SIP port. Every REST-visible status change updates the record and sends the
 *   progress callbacks asked for; `call.ended` (exactly once) closes the record, releases the media
 *   endpoint and the admission slot, tells the interpreter, and evicts the actor.
 * - Live modification: Status=canceled (queued or ringing only), Status=completed (any live call),
 *   Url (redirect: the interpreter replaces its program).
 *
 * Each leg's media endpoint id is its call sid.
 */

import { type Actor, type AnyActorRef, createActor } from 'xstate';
import { AppError } from '../../errors.js';
import { newSid, SidPrefix } from '../../ids.js';
import type { Logger } from '../../logger.js';
import type { MediaEvent, MediaPort } from '../../media/port.js';
import type { NotifyInput } from '../../notifications/notifier.js';
import { sipUserAndHost } from '../../numbers/address.js';
import {
  type Flow,
  type InboundInvite,
  NoRouteError,
  type PersistedDialog,
  parseCallTarget,
  persistedDialog,
  planOutgoingRequest,
  type SipEvent,
  SipNotificationCode,
  type SipPort,
  TargetError,
} from '../../sip/port.js';
import {
  type CallClaim,
  type CallDirection,
  type CallRecord,
  CallStatus,
  type CallStore,
  type OrphanCall,
  type StoredStatusCallback,
} from '../../store/call-store.js';
import type { IncomingNumber } from '../../store/number-store.js';
import type { MultiProviderConfig } from '../../store/profile-store.js';
import type { SnapshotStore } from '../../store/snapshot-store.js';
import type { HttpMethod, WebhookRequest, WebhookResult } from '../../webhooks/index.js';
import type { InterpreterInput } from '../interpreter/interpreter.types.js';
import { DEFAULT_API_VERSION } from '../interpreter/interpreter.types.js';
import type { ParticipantFlags } from '../interpreter/verbs/conference-rooms.js';
import { ActorRegistry } from '../runtime.js';
import type { CallAdmission } from './admission.js';
import { callMachine, statusOf } from './call.machine.js';
import type { CallEmitted, CallEvent } from './call.types.js';
import type { InboundRoute } from './inbound-routing.js';
import { numberStatusParams, ProgressEvent, progressEventOf, progressParams } from './status-callbacks.js';

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
  readonly ended: Promise<CallEnd>;
  hangUp(): void;
  /**
   * Runs markup on the answered leg before it is bridged (Dial noun `url`, the "whisper"); resolves
   * true when the document ended with the leg still up, false when the leg ended.
   */
  whisper(url: string, method: HttpMethod): Promise<boolean>;
}

/** The number's StatusCallback, kept for the calls it routes (not the whole number). */
type NumberCallback = Pick<IncomingNumber, 'statusCallback' | 'statusCallbackMethod'>;

/**
 * Per-call data that is not the machine's. A class so that thousands of held calls share one
 * shape; the logger is made on first use (most calls never log).
 */
class Session {
  readonly request: OutboundCallRequest | null;
  readonly number: NumberCallback | null;
  /** The caller's SDP offer of an inbound leg, until its endpoint answers it. */
  remoteSdp: string | null;
  /** Credentials for the next hop of a `<Dial><Sip username password>`. */
  readonly credentials: { readonly username: string; readonly password: string } | null;
  sequence = 0;
  readonly admission = new AbortController();
  admitted = false;
  /** Record updates and callbacks of one call run in order (a pool may reorder queries). */
  chain: Promise<unknown> = Promise.resolve();
  localSdp: string | null = null;
  interpreter: AnyActorRef | null = null;
  /** Conference room the leg's endpoint is in (`AC…:name`), from the media engine. */
  room: string | null = null;
  muted = false;
  /** Moved out of its `<Dial>` by MoveConnectedCallLeg: the parent's Dial no longer ends it. */
  detached = false;
  /** The parent/child leg it is bridged with by a `<Dial>`. */
  peer: string | null = null;
  /** Final SIP status of the leg's INVITE so far (SipResponseCode), and why it failed when it did. */
  sipResponse: {
    readonly status: number;
    readonly reason: string | null;
    /** The server itself did not send the INVITE (no route, client not registered…). */
    readonly local?: boolean;
    /** A more specific Notification than the generic failure one was already written. */
    readonly notified?: boolean;
  } | null = null;
  /** StatusCallback given on modification: requested when the call ends. */
  endCallback: { readonly url: string; readonly method: HttpMethod } | null = null;
  readonly answered = deferred<boolean>();
  readonly confirmed = deferred<boolean>();
  readonly ended = deferred<CallEnd>();
  private logger: Logger | null = null;

  constructor(
    public record: CallRecord,
    private readonly parentLogger: Logger,
    extra: {
      request?: OutboundCallRequest;
      remoteSdp?: string | null;
      number?: IncomingNumber | null;
      credentials?: { username: string; password: string } | null;
    },
  ) {
    this.request = extra.request ?? null;
    this.remoteSdp = extra.remoteSdp ?? null;
    const n = extra.number;
    this.number = n?.statusCallback
      ? { statusCallback: n.statusCallback, statusCallbackMethod: n.statusCallbackMethod }
      : null;
    this.credentials = extra.credentials ?? null;
  }

  get log(): Logger {
    this.logger ??= this.parentLogger.child({ callSid: this.record.sid, accountSid: this.record.accountSid });
    return this.logger;
  }
}

/** `promise`, or its rejection with the signal's reason on abort; leaves no listener behind. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(v: T): void;
}
function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

export interface CallRuntimeDeps {
  readonly sip: SipPort & {
    onEvent(listener: (e: SipEvent) => void): () => void;
    /** A rejection of the handler's promise ends that leg (500) in the SIP adapter. */
    onInvite(handler: (invite: InboundInvite) => void | Promise<void>): void;
  };
  readonly media: MediaPort;
  readonly calls: CallStore;
  readonly snapshots: SnapshotStore;
  readonly admission: CallAdmission;
  readonly webhooks: { request(req: WebhookRequest): Promise<WebhookResult> };
  readonly notify: (input: NotifyInput) => unknown;
  /** The account's AuthToken (signs its webhooks). */
  readonly authTokenOf: (accountSid: string) => Promise<string | null>;
  readonly multiProviderOf: (accountSid: string) => Promise<MultiProviderConfig | null>;
  /** Registered contacts of a client of the account's organization (location lookup), newest first. */
  readonly locateClient: (
    accountSid: string,
    login: string,
  ) => Promise<Array<{ readonly contact: string; readonly flow: Flow }>>;
  readonly routeInbound: (invite: InboundInvite) => Promise<InboundRoute>;
  /** Starts the markup interpreter of a leg (the composition root owns the machine). */
  readonly startInterpreter: (input: InterpreterInput) => AnyActorRef;
  /** SIP host advertised in From of outbound calls. */
  readonly sipHost: string;
  /** Platform default outbound proxy for numbers (SIP_OUTBOUND_PROXY). */
  readonly defaultProxy: string | null;
  readonly instanceId: string;
  /** This node's claim on its live calls lasts this long unrenewed (CALL_LEASE_SECONDS). */
  readonly callLeaseMs: number;
  /** A number of the account (its StatusCallback, for calls recovered from a node that died). */
  readonly numberOf?: (accountSid: string, sid: string) => Promise<IncomingNumber | null>;
  /** The conference attributes a leg's endpoint joined with (`<Conference>`), when it is in a room. */
  readonly conferenceFlagsOf?: (endpointId: string) => ParticipantFlags | null;
  readonly logger: Logger;
}

/** Abort reason of a call's admission wait once the call has ended (one instance: no stack per call). */
const CALL_ENDED = new AppError('Conflict', 'call ended');
/** Live call snapshots outlive a crashed node by this much (seconds). */
const SNAPSHOT_TTL_SECONDS = 6 * 3600;
/** Retry-After of a 503 for an exhausted RTP port range, seconds. */
const NO_MEDIA_RETRY_AFTER_SECONDS = 30;
/** How long a new endpoint may take before the call fails. */
const ENDPOINT_TIMEOUT_MS = 5_000;

export class CallRuntime {
  private readonly actors = new ActorRegistry<CallActor>();
  private readonly sessions = new Map<string, Session>();
  /** Inbound legs that ended while they were being routed. */
  private readonly goneEarly = new Set<string>();
  private readonly routing = new Set<string>();
  private readonly unsubscribe: Array<() => void> = [];
  private stopped = false;
  private readonly claim: CallClaim;
  private sweep: NodeJS.Timeout | null = null;

  constructor(private readonly deps: CallRuntimeDeps) {
    this.claim = { node: deps.instanceId, leaseMs: deps.callLeaseMs };
    this.unsubscribe.push(deps.sip.onEvent((e) => this.onSipEvent(e)));
    this.unsubscribe.push(deps.media.subscribe((e) => this.onMediaEvent(e)));
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

  /** The live record of a call on this node (From, To, direction…), or null. */
  recordOf(sid: string): CallRecord | null {
    return this.sessions.get(sid)?.record ?? null;
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
      if (e instanceof TargetError) throw new AppError('InvalidParameter', e.reason);
      throw e;
    }
    const record = this.newRecord({
      accountSid: request.accountSid,
      from: request.from,
      to: request.to,
      direction: 'outbound-api',
      status: CallStatus.Queued,
      apiVersion: request.apiVersion,
    });
    await this.deps.calls.insert(record, {
      claim: this.claim,
      statusCallback: request.statusCallback
        ? {
            url: request.statusCallback,
            method: request.statusCallbackMethod,
            events: [...request.statusCallbackEvents],
          }
        : null,
    });
    const session = new Session(record, this.deps.logger, { request });
    this.start(session, request.timeoutSeconds);
    void this.admitAndDial(session);
    return record;
  }

  /**
   * Places a `<Dial>` child leg (outbound-dial) of `parentSid` to `to` (number, `sip:` URI or
   * `client:name`); it rings at most `timeoutSeconds`. Not subject to REST admission.
   */
  async dialChild(
    parentSid: string,
    to: string,
    opts: {
      readonly callerId: string;
      readonly timeoutSeconds: number;
      readonly credentials?: { readonly username: string; readonly password: string } | null;
    },
  ): Promise<ChildLeg> {
    const parent = this.sessions.get(parentSid);
    if (!parent) throw new AppError('Conflict', `Call ${parentSid} is not live`);
    const record = this.newRecord({
      accountSid: parent.record.accountSid,
      from: opts.callerId,
      to,
      direction: 'outbound-dial',
      status: CallStatus.Queued,
      apiVersion: parent.record.apiVersion,
      parentCallSid: parentSid,
    });
    await this.deps.calls.insert(record, { claim: this.claim });
    const session = new Session(record, this.deps.logger, { credentials: opts.credentials ?? null });
    this.start(session, opts.timeoutSeconds);
    this.actors.get(record.sid)?.send({ type: 'call.dial', at: Date.now() });
    return {
      sid: record.sid,
      answered: session.answered.promise,
      ended: session.ended.promise,
      hangUp: () => {
        if (!session.detached) this.end(record.sid);
      },
      whisper: (url, method) =>
        new Promise<boolean>((resolve) => {
          void session.ended.promise.then(() => resolve(false));
          this.runMarkup(session, {
            url,
            method,
            fallbackUrl: null,
            fallbackMethod: 'POST',
            answered: true,
            onComplete: () => resolve(this.liveStatus(record.sid) === CallStatus.InProgress),
          });
        }),
    };
  }

  /** Records that two legs are bridged by a `<Dial>` (for MoveConnectedCallLeg). */
  setPeers(a: string, b: string | null): void {
    const sa = this.sessions.get(a);
    if (sa) sa.peer = b;
    if (b) {
      const sb = this.sessions.get(b);
      if (sb) sb.peer = a;
    }
  }

  /** Live view used by the REST modification response. */
  liveView(sid: string): {
    room: string | null;
    muted: boolean;
    startConferenceOnEnter: boolean;
    endConferenceOnEnter: boolean;
  } | null {
    const s = this.sessions.get(sid);
    if (!s) return null;
    const flags = this.deps.conferenceFlagsOf?.(sid) ?? null;
    return {
      room: s.room,
      muted: s.muted,
      // Twilio's defaults outside a conference.
      startConferenceOnEnter: flags?.startsConference ?? true,
      endConferenceOnEnter: flags?.endsConference ?? false,
    };
  }

  /** Mutes or unmutes what the leg says (bridge and conference); false when not live. */
  setMuted(sid: string, muted: boolean): boolean {
    const s = this.sessions.get(sid);
    if (!s) return false;
    s.muted = muted;
    this.deps.media.setMuted(sid, muted);
    return true;
  }

  /** A StatusCallback requested when the call ends (modification parameter). */
  setEndCallback(sid: string, url: string, method: HttpMethod): boolean {
    const s = this.sessions.get(sid);
    if (!s) return false;
    s.endCallback = { url, method };
    return true;
  }

  /**
   * MoveConnectedCallLeg: redirects the call and the leg it is bridged with to the same markup;
   * the bridge ends and each leg runs the new document on its own.
   */
  moveConnected(
    sid: string,
    to: { url: string; method: HttpMethod; fallbackUrl: string | null; fallbackMethod: HttpMethod },
  ): boolean {
    const s = this.sessions.get(sid);
    if (!s) return false;
    const peer = s.peer ? this.sessions.get(s.peer) : undefined;
    if (peer) {
      // The child of a Dial is detached so the parent's Dial ending does not hang it up.
      const child = peer.record.parentCallSid === sid ? peer : s;
      child.detached = true;
      this.deps.media.unbridge(sid, peer.record.sid);
      s.peer = null;
      peer.peer = null;
      this.redirect(peer.record.sid, to);
    }
    return this.redirect(sid, to);
  }

  /** Ends a live call whatever its state (Status=completed semantics); no-op when gone. */
  end(sid: string): void {
    const actor = this.actors.get(sid);
    if (!actor) return;
    const e: CallEvent = { type: 'http.complete', at: Date.now() };
    if (actor.getSnapshot().can(e)) actor.send(e);
  }

  /**
   * Live modification by status (spec §Call state table): `canceled` affects only a queued or
   * ringing call, `completed` ends any live call.
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

  /** Live modification by Url: the call's markup is replaced (REST redirect). False when not live. */
  redirect(
    sid: string,
    to: { url: string; method: HttpMethod; fallbackUrl: string | null; fallbackMethod: HttpMethod },
  ): boolean {
    const session = this.sessions.get(sid);
    if (!session || !this.actors.get(sid)) return false;
    if (session.interpreter) {
      session.interpreter.send({ type: 'http.redirect', ...to });
      return true;
    }
    if (statusOf(this.actors.get(sid)!.getSnapshot()) !== CallStatus.InProgress) return false;
    this.runMarkup(session, { ...to, answered: true });
    return true;
  }

  // ---- call control (used by the interpreter's CallControl) ------------------------------------

  /**
   * Answers an inbound leg: creates its media endpoint from the caller's offer, sends 200 with our
   * answer, and resolves when the ACK arrives. Idempotent; rejects when the leg is gone.
   */
  async answer(sid: string, signal: AbortSignal): Promise<void> {
    const session = this.sessions.get(sid);
    const actor = this.actors.get(sid);
    if (!session || !actor) throw new Error(`call ${sid} is not live`);
    const status = statusOf(actor.getSnapshot());
    if (status === CallStatus.InProgress) return;
    if (status !== CallStatus.Ringing) throw new Error(`call ${sid} cannot be answered (${status})`);
    if (!session.localSdp) {
      session.localSdp = await this.createEndpoint(sid, session.remoteSdp ?? undefined, signal).catch(
        (err: unknown) => {
          if (err instanceof MediaSetupError && err.reason === 'no-port') this.noMediaCapacity(session);
          throw err;
        },
      );
      session.remoteSdp = null;
      if (signal.aborted) throw signal.reason;
    }
    actor.send({ type: 'app.answer', at: Date.now() });
    // `confirmed` settles false when the call ends first.
    const confirmed = await untilAborted(session.confirmed.promise, signal);
    if (!confirmed) throw new Error(`call ${sid} ended before it was answered`);
  }

  /**
   * The RTP port range is exhausted: the caller may try again shortly (503 with Retry-After, not a
   * final refusal), and the account hears why its call was not answered.
   */
  private noMediaCapacity(session: Session): void {
    const r = session.record;
    session.log.warn('no RTP port free: call refused with 503');
    this.deps.sip.reject(r.sid, 503, 'No Media Capacity', NO_MEDIA_RETRY_AFTER_SECONDS);
    this.deps.notify({
      accountSid: r.accountSid,
      callSid: r.sid,
      errorCode: SipNotificationCode.NoMediaCapacity,
      messageText: `Call ${r.sid} from ${r.from} refused with 503: no free RTP port on this node`,
    });
  }

  /** Sends an interpreter intent (`app.reject`, `app.hangup`) to the call actor. */
  intent(sid: string, event: Extract<CallEvent, { type: 'app.reject' | 'app.hangup' }>): void {
    const actor = this.actors.get(sid);
    if (actor?.getSnapshot().can(event)) actor.send(event);
  }

  /** DTMF to the far end as SIP INFO application/dtmf-relay (RFC 2833 alternative used by carriers). */
  async sendDigits(sid: string, digits: string, signal: AbortSignal): Promise<void> {
    for (const d of digits) {
      if (signal.aborted) return;
      if (d === 'w' || d === 'W') {
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      this.deps.sip.sendInfo(sid, 'application/dtmf-relay', `Signal=${d}\r\nDuration=160\r\n`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Stops every actor (no callbacks); idempotent. Live SIP legs are ended by the SIP service. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.sweep) clearInterval(this.sweep);
    for (const u of this.unsubscribe) u();
    for (const s of this.sessions.values()) {
      s.admission.abort(new AppError('Unavailable', 'shutting down'));
      s.interpreter?.stop();
    }
    this.actors.stopAll();
    this.sessions.clear();
  }

  // ---- recovery ---------------------------------------------------------------------------------

  /**
   * Recovery of calls whose node died (docs/calls.md): renews this node's claims on its live calls
   * every third of the lease and ends live calls whose claim expired — BYE with the dialog from their
   * snapshot when answered, the record closed (completed when answered, else failed). At start, this
   * node's own old claims (a restart with a fixed INSTANCE_ID) are released first: nothing is live yet.
   */
  async startRecovery(): Promise<void> {
    await this.deps.calls.releaseClaims(this.claim.node);
    await this.recoverOrphans();
    this.sweep = setInterval(
      () => {
        void this.deps.calls
          .renewClaims(this.claim.node, this.claim.leaseMs)
          .then(() => this.recoverOrphans())
          .catch((err) => this.deps.logger.warn({ err }, 'call claims not renewed'));
      },
      Math.max(1000, Math.floor(this.claim.leaseMs / 3)),
    );
    this.sweep.unref();
  }

  private async recoverOrphans(): Promise<void> {
    for (;;) {
      const orphans = await this.deps.calls.claimOrphans(this.claim.node, this.claim.leaseMs, 100);
      for (const orphan of orphans) {
        const sid = orphan.record.sid;
        // Live here after all (a renewal came late): the claim is ours again, nothing to do.
        if (this.actors.get(sid)) continue;
        await this.recoverOrphan(orphan).catch((err) =>
          this.deps.logger.error({ err, callSid: sid }, 'orphaned call not recovered'),
        );
      }
      if (orphans.length < 100 || this.stopped) return;
    }
  }

  private async recoverOrphan({ record, statusCallback }: OrphanCall): Promise<void> {
    const snapshot = await this.deps.snapshots.load<{ context?: { dialog?: PersistedDialog | null } }>(
      'call',
      record.sid,
    );
    const dialog = snapshot?.context?.dialog ?? null;
    const answered = record.status === CallStatus.InProgress;
    if (answered && dialog) this.deps.sip.endDialog(dialog);
    const now = new Date();
    const duration =
      answered && record.startTime
        ? Math.max(0, Math.round((now.getTime() - record.startTime.getTime()) / 1000))
        : 0;
    const status = answered ? CallStatus.Completed : CallStatus.Failed;
    const closed = (await this.deps.calls.update(record.sid, { status, endTime: now, duration })) ?? record;
    await this.deps.snapshots.delete('call', record.sid);
    await this.recoveredCallbacks(closed, record.status, statusCallback, now.getTime(), duration);
    this.deps.logger.warn(
      {
        callSid: record.sid,
        accountSid: record.accountSid,
        was: record.status,
        bye: answered && dialog !== null,
      },
      'call of a node that died: ended',
    );
  }

  /**
   * The callbacks a recovered call still owes: the REST StatusCallback's `completed` (its
   * SequenceNumber follows the events the call's last status implies were sent) and, for an answered
   * call to a number, the number's `completed`.
   */
  private async recoveredCallbacks(
    call: CallRecord,
    was: CallStatus,
    cb: StoredStatusCallback | null,
    at: number,
    duration: number,
  ): Promise<void> {
    if (cb?.events.includes(ProgressEvent.Completed)) {
      const reached: readonly string[] =
        was === CallStatus.Queued
          ? [ProgressEvent.Initiated]
          : was === CallStatus.Ringing
            ? [ProgressEvent.Initiated, ProgressEvent.Ringing]
            : [ProgressEvent.Initiated, ProgressEvent.Ringing, ProgressEvent.Answered];
      const sequence = reached.filter((e) => cb.events.includes(e)).length;
      await this.callback(call, cb.url, cb.method, progressParams(call, call.status, sequence, at, duration));
    }
    if (call.status === CallStatus.Completed && call.phoneNumberSid && this.deps.numberOf) {
      const n = await this.deps.numberOf(call.accountSid, call.phoneNumberSid);
      if (n?.statusCallback) {
        await this.callback(
          call,
          n.statusCallback,
          n.statusCallbackMethod,
          numberStatusParams(call, 'completed', this.deps.instanceId),
        );
      }
    }
  }

  // ---- inbound --------------------------------------------------------------------------------

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
    const record = this.newRecord({
      sid: legId,
      accountSid: route.accountSid,
      from: route.from,
      to: route.to,
      direction: 'inbound',
      status: CallStatus.Ringing,
      apiVersion: route.kind === 'markup' ? route.apiVersion : DEFAULT_API_VERSION,
      phoneNumberSid: route.kind === 'markup' ? (route.number?.sid ?? null) : null,
      callerName: invite.from.displayName ?? null,
      forwardedFrom: forwardedFrom(invite),
      sipCallId: invite.callId,
    });
    await this.deps.calls.insert(record, { claim: this.claim });
    const session = new Session(record, this.deps.logger, {
      remoteSdp: invite.sdp,
      number: route.kind === 'markup' ? route.number : null,
    });
    this.start(session);
    if (route.kind === 'client') {
      // Client to client without a VoiceUrl of its own: bridge to the dialled client directly.
      void this.bridgeToClient(session, route.login);
      return;
    }
    this.deps.sip.sendProvisional(legId, 180);
    this.inOrder(session, () => this.sendNumberStatus(session, 'ringing'));
    this.runMarkup(session, {
      url: route.url,
      method: route.method,
      fallbackUrl: route.fallbackUrl,
      fallbackMethod: route.fallbackMethod,
      answered: false,
    });
  }

  /** A registered client called another client directly: answer once the callee answers, bridge. */
  private async bridgeToClient(session: Session, login: string): Promise<void> {
    const sid = session.record.sid;
    this.deps.sip.sendProvisional(sid, 180);
    const abort = new AbortController();
    void session.ended.promise.then(() => abort.abort(new Error('caller gone')));
    try {
      const child = await this.dialChild(sid, `client:${login}`, {
        callerId: session.record.from,
        timeoutSeconds: 60,
      });
      void session.ended.promise.then(() => child.hangUp());
      if (!(await child.answered)) {
        const end = await child.ended;
        this.intent(sid, {
          type: 'app.reject',
          reason: end.status === 'busy' ? 'busy' : 'rejected',
          at: Date.now(),
        });
        return;
      }
      await this.answer(sid, abort.signal);
      this.deps.media.bridge(sid, child.sid);
      await child.ended;
      this.intent(sid, { type: 'app.hangup', at: Date.now() });
    } catch (err) {
      session.log.debug({ err }, 'client bridge ended');
      this.intent(sid, { type: 'app.hangup', at: Date.now() });
    }
  }

  private runMarkup(
    session: Session,
    m: {
      url: string;
      method: HttpMethod;
      fallbackUrl: string | null;
      fallbackMethod: HttpMethod;
      answered: boolean;
      /** Called when the document ends (a whisper); without it the call is hung up then. */
      onComplete?: () => void;
    },
  ): void {
    const r = session.record;
    const interpreter = this.deps.startInterpreter({
      call: {
        callSid: r.sid,
        accountSid: r.accountSid,
        from: r.from,
        to: r.to,
        direction: r.direction,
        endpointId: r.sid,
        apiVersion: r.apiVersion,
        parentCallSid: r.parentCallSid,
        forwardedFrom: r.forwardedFrom,
        callerName: r.callerName,
      },
      url: m.url,
      method: m.method,
      fallbackUrl: m.fallbackUrl,
      fallbackMethod: m.fallbackMethod,
      answered: m.answered,
      ...(m.onComplete ? { whisper: true } : {}),
    });
    session.interpreter = interpreter;
    interpreter.subscribe({
      complete: () => {
        if (session.interpreter === interpreter) session.interpreter = null;
        if (m.onComplete) return m.onComplete();
        // The document ended without ending the call (a verb outcome the runtime did not see): hang up.
        this.intent(r.sid, { type: 'app.hangup', at: Date.now() });
      },
      error: (err) => {
        session.log.error({ err }, 'interpreter failed');
        this.intent(r.sid, { type: 'app.hangup', at: Date.now() });
      },
    });
  }

  // ---- lifecycle ------------------------------------------------------------------------------

  private newRecord(
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

  private start(session: Session, timeoutSeconds?: number): void {
    const record = session.record;
    const actor = createActor(callMachine, {
      input: {
        sid: record.sid,
        accountSid: record.accountSid,
        direction: record.direction as CallDirection,
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

  private async admitAndDial(session: Session): Promise<void> {
    const sid = session.record.sid;
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

  /** Creates the leg's media endpoint (answering `remoteSdp` when given); resolves with our SDP. */
  private createEndpoint(sid: string, remoteSdp: string | undefined, signal?: AbortSignal): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const off = this.deps.media.subscribe((e) => {
        if (e.type === 'media.endpointReady' && e.endpoint.endpointId === sid) {
          done();
          resolve(e.endpoint.sdp);
        } else if (
          (e.type === 'media.endpointFailed' || e.type === 'media.endpointLost') &&
          e.endpointId === sid
        ) {
          done();
          reject(new MediaSetupError(e.type === 'media.endpointFailed' ? e.reason : 'engine-down', sid));
        }
      });
      const timer = setTimeout(() => {
        done();
        reject(new MediaSetupError('timeout', sid));
      }, ENDPOINT_TIMEOUT_MS);
      const onAbort = () => {
        done();
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = () => {
        off();
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      this.deps.media.createEndpoint(sid, remoteSdp ? { remoteSdp } : {});
    });
  }

  // ---- SIP / media → actor --------------------------------------------------------------------

  private onSipEvent(e: SipEvent): void {
    if (!('legId' in e)) return;
    const actor = this.actors.get(e.legId);
    if (!actor) {
      if (this.routing.has(e.legId) && (e.type === 'sip.cancel' || e.type === 'sip.ended'))
        this.goneEarly.add(e.legId);
      return;
    }
    const at = Date.now();
    switch (e.type) {
      case 'sip.ringing':
        actor.send({ type: 'sip.ringing', at });
        return;
      case 'sip.answered':
        if (e.sdp) this.deps.media.applyRemoteSdp(e.legId, e.sdp);
        actor.send({ type: 'sip.answered', at, dialog: persistedDialog(e.dialog) });
        return;
      case 'sip.confirmed':
        actor.send({ type: 'sip.dialog', dialog: persistedDialog(e.dialog) });
        this.sessions.get(e.legId)?.confirmed.resolve(true);
        return;
      case 'sip.failed': {
        const s = this.sessions.get(e.legId);
        if (s) s.sipResponse = { status: e.status, reason: `${e.status} ${e.reason}`.trim() };
        actor.send({ type: 'sip.failed', status: e.status, at });
        return;
      }
      case 'sip.bye':
        actor.send({ type: 'sip.bye', at });
        return;
      case 'sip.cancel': {
        // The SIP layer answers the caller's CANCEL with 487.
        const s = this.sessions.get(e.legId);
        if (s && !s.sipResponse) s.sipResponse = { status: 487, reason: null };
        actor.send({ type: 'sip.cancel', at });
        return;
      }
      case 'sip.ended':
        // A leg we did not end ourselves: no ACK for our 2xx, or its connection died.
        if (e.cause === 'ack-timeout' || e.cause === 'transport') actor.send({ type: 'sip.bye', at });
        return;
      default:
        return;
    }
  }

  private onMediaEvent(e: MediaEvent): void {
    if (e.type === 'media.conferenceJoined' || e.type === 'media.conferenceLeft') {
      const s = this.sessions.get(e.endpointId);
      if (s) s.room = e.type === 'media.conferenceJoined' ? e.room : null;
      return;
    }
    if (e.type !== 'media.endpointLost') return;
    const session = this.sessions.get(e.endpointId);
    if (!session) return;
    session.log.warn({ reason: e.reason }, 'media endpoint lost: ending the call');
    this.end(e.endpointId);
    this.intent(e.endpointId, { type: 'app.hangup', at: Date.now() });
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
        session.sipResponse = { status: e.status, reason: null };
        this.deps.sip.reject(e.callSid, e.status);
        return;
      case 'sip.answer':
        if (session.localSdp) this.deps.sip.answer(e.callSid, session.localSdp);
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
    const fail = (status: number, message: string, notified = false) => {
      session.log.info({ status, message }, 'call not placed');
      session.sipResponse = { status, reason: message, local: true, notified };
      this.actors.get(sid)?.send({ type: 'sip.failed', status, at: Date.now() });
    };
    try {
      const target = parseCallTarget(record.to);
      const [multiProvider, bindings, sdp] = await Promise.all([
        target.kind !== 'client' ? this.deps.multiProviderOf(record.accountSid) : Promise.resolve(null),
        target.kind === 'client'
          ? this.deps.locateClient(record.accountSid, target.name)
          : Promise.resolve([]),
        this.createEndpoint(sid, undefined),
      ]);
      session.localSdp = sdp;
      const plan = planOutgoingRequest({
        target,
        clientContacts: bindings.map((b) => b.contact),
        multiProvider,
        ...(this.deps.defaultProxy ? { defaultProxy: this.deps.defaultProxy } : {}),
      });
      const fromUser = record.from.replace(/^client:/, '');
      const credentials = session.credentials ?? plan.credentials;
      // A client registered over TCP or WS is reached over its own connection.
      const flow = bindings[0] && bindings[0].flow.protocol !== 'UDP' ? bindings[0].flow : undefined;
      const refused = flow ? null : await this.deps.sip.checkTarget(plan.requestUri, plan.route);
      // notifyFailed writes the 13225 (ForbiddenDestination) for a local 403.
      if (refused) return fail(403, refused);
      if (this.actors.get(sid)?.getSnapshot().status !== 'active') return;
      this.deps.sip.placeCall(sid, {
        requestUri: plan.requestUri,
        from: { uri: `sip:${encodeURIComponent(fromUser)}@${this.deps.sipHost}` },
        to: { uri: plan.requestUri },
        route: plan.route,
        headers: plan.headers,
        ...(credentials ? { credentials } : {}),
        ...(flow ? { flow } : {}),
        sdp,
      });
      const at = Date.now();
      this.inOrder(session, () => this.sendProgress(session, 'initiated', at));
    } catch (e) {
      if (e instanceof NoRouteError) fail(e.reason === 'client-not-registered' ? 480 : 503, e.message);
      else if (e instanceof TargetError) fail(400, e.message);
      else if (e instanceof MediaSetupError) {
        if (e.reason === 'no-port')
          this.deps.notify({
            accountSid: record.accountSid,
            callSid: sid,
            errorCode: SipNotificationCode.NoMediaCapacity,
            messageText: `Call to ${record.to} not placed: no free RTP port on this node`,
          });
        fail(503, e.message, e.reason === 'no-port');
      } else {
        session.log.error({ err: e }, 'placing the call failed');
        fail(500, 'internal error');
      }
    }
  }

  private async onStatus(session: Session, status: CallStatus, at: number): Promise<void> {
    if (status === CallStatus.InProgress) session.sipResponse = { status: 200, reason: null };
    const patch =
      status === CallStatus.InProgress
        ? { status, startTime: new Date(at), sipResponseCode: 200 }
        : { status };
    session.record = { ...session.record, ...patch };
    await this.deps.calls.update(session.record.sid, patch).catch((err) => {
      session.log.warn({ err }, 'call record not updated');
    });
    if (status === CallStatus.InProgress) {
      session.answered.resolve(true);
      const req = session.request;
      if (req)
        this.runMarkup(session, {
          url: req.url,
          method: req.method,
          fallbackUrl: req.fallbackUrl,
          fallbackMethod: req.fallbackMethod,
          answered: true,
        });
      await this.sendNumberStatus(session, 'in-progress');
    }
    await this.sendProgress(session, status, at);
  }

  private async onEnded(session: Session, status: CallStatus, at: number, duration: number): Promise<void> {
    const sid = session.record.sid;
    session.admission.abort(CALL_ENDED);
    session.answered.resolve(false);
    session.confirmed.resolve(false);
    session.interpreter?.send({ type: 'call.ended' });
    this.deps.media.release(sid);
    const sipStatus = this.actors.get(sid)?.getSnapshot().context.sipStatus ?? null;
    const sipResponseCode = session.sipResponse?.status ?? null;
    session.record = { ...session.record, status, endTime: new Date(at), duration, sipResponseCode };
    if ((status === CallStatus.Failed || session.sipResponse?.local) && !session.sipResponse?.notified)
      this.notifyFailed(session);
    await Promise.all([
      this.deps.calls
        .update(sid, { status, endTime: new Date(at), duration, sipResponseCode })
        .catch((err) => session.log.warn({ err }, 'call record not closed')),
      this.releaseSlot(session),
      this.deps.snapshots.delete('call', sid).catch(() => {}),
    ]);
    session.log.info({ status, duration }, 'call ended');
    session.ended.resolve({ status, durationSeconds: duration, sipStatus });
    const end = session.endCallback;
    await Promise.all([
      this.sendProgress(session, status, at, duration),
      end
        ? this.callback(
            session.record,
            end.url,
            end.method,
            progressParams(session.record, status, session.sequence++, at, duration),
          )
        : Promise.resolve(),
      status === CallStatus.Completed ? this.sendNumberStatus(session, 'completed') : Promise.resolve(),
    ]);
    this.sessions.delete(sid);
    this.actors.evict(sid);
  }

  /**
   * A leg that failed, or that the server could not send at all, tells its account why (the reason
   * was only in the log): the SIP status and reason the far end gave, or why no INVITE went out (no
   * route, client not registered, target refused or invalid). 13225 when a policy refused the target,
   * else 13224. Busy and no answer from the far end are outcomes, not errors: no Notification.
   */
  private notifyFailed(session: Session): void {
    const r = session.record;
    const failure = session.sipResponse;
    const why = failure?.reason ?? (failure ? `SIP ${failure.status}` : 'no SIP response');
    this.deps.notify({
      accountSid: r.accountSid,
      callSid: r.sid,
      errorCode: failure?.status === 403 ? CallFailureCode.TargetRefused : CallFailureCode.NotDelivered,
      log: 0,
      messageText: `Call to ${r.to} failed: ${why}`,
    });
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
    await this.callback(session.record, request.statusCallback, request.statusCallbackMethod, {
      ...progressParams(session.record, status, session.sequence++, at, duration),
    });
  }

  /** The number's StatusCallback (spec §Events "Incoming phone number status"). */
  private async sendNumberStatus(
    session: Session,
    status: 'ringing' | 'in-progress' | 'completed',
  ): Promise<void> {
    const n = session.number;
    if (!n?.statusCallback) return;
    await this.callback(
      session.record,
      n.statusCallback,
      n.statusCallbackMethod,
      numberStatusParams(session.record, status, this.deps.instanceId),
    );
  }

  /** A signed callback about `call` (with its account's AuthToken). */
  private async callback(
    call: Pick<CallRecord, 'sid' | 'accountSid'>,
    url: string,
    method: HttpMethod,
    params: Record<string, string>,
  ): Promise<void> {
    const authToken = await this.deps.authTokenOf(call.accountSid);
    if (authToken === null) return;
    await this.deps.webhooks.request({
      url,
      method,
      params: Object.entries(params),
      accountSid: call.accountSid,
      authToken,
      context: { callSid: call.sid },
    });
  }
}

/**
 * Notification codes of a failed outbound leg (Twilio's Dial catalogue): 13224 "cannot call this
 * number or it is invalid; no carrier could deliver the call", 13225 "forbidden phone number".
 */
export const CallFailureCode = {
  NotDelivered: 13224,
  TargetRefused: SipNotificationCode.ForbiddenDestination,
} as const;

/** A leg's media endpoint could not be set up (`reason` from the engine, or `timeout`). */
export class MediaSetupError extends Error {
  constructor(
    readonly reason: string,
    sid: string,
  ) {
    super(`media endpoint for ${sid} failed: ${reason}`);
  }
}

/** The number the call was forwarded from (Diversion, RFC 5806), when present. */
function forwardedFrom(invite: InboundInvite): string | null {
  const d = invite.headers.diversion;
  if (!d) return null;
  return sipUserAndHost(d)?.user ?? null;
}
