import type { PersistedDialog } from '../../sip/port.js';
import type { CallDirection, CallStatus } from '../../store/call-store.js';
import type { HttpMethod } from '../../webhooks/index.js';
import type { ProgressEvent } from './status-callbacks.js';

/** A markup document to fetch and run (Url + fallback of a call, a number or a redirect). */
export interface MarkupTarget {
  readonly url: string;
  readonly method: HttpMethod;
  readonly fallbackUrl: string | null;
  readonly fallbackMethod: HttpMethod;
}

/**
 * What runs the call (its "app"): a markup document, or — for a client calling a client without a
 * VoiceUrl — the bridge to the dialled client. `whisper`: markup on an answered `<Dial>` child before
 * it is bridged; its end does not hang the leg up.
 */
export type CallApp =
  | (MarkupTarget & { readonly kind: 'markup'; readonly answered: boolean; readonly whisper?: boolean })
  | { readonly kind: 'client'; readonly login: string };

/** A REFER from the leg's far end being handled (the plain data of `sip.refer`). */
export interface ReferRequest {
  readonly id: string;
  readonly referTo: string;
  /** User parts of Refer-To, Contact and To (RFC 5589 §6.1 roles). */
  readonly target: string | null;
  readonly transferor: string | null;
  readonly transferee: string | null;
}

/**
 * A leg transferred by a REFER on the leg it was bridged with: its markup requests and status
 * callbacks carry ReferTarget, Transferor and Transferee; `by` (the transferor's leg) hears the
 * outcome of its next `<Dial>`.
 */
export interface Transfer {
  readonly referTarget: string;
  readonly transferor: string;
  readonly transferee: string;
  readonly by: string;
}

/** A leg placed by a `<Dial>` as its parent's status callbacks name it. */
export interface DialedLeg {
  readonly sid: string;
  readonly sipCallId: string | null;
  readonly sipStatus: number | null;
  readonly sipHeaders: Readonly<Record<string, string>>;
}

/** What an accepted REFER does: the leg that is transferred and the markup it runs (ReferUrl). */
export interface ReferPlan {
  readonly transferee: string;
  readonly app: MarkupTarget;
}

/** What a REST client asked for in `POST /Calls` besides From/To (validated by the route). */
export interface OutboundCallRequest extends MarkupTarget {
  readonly accountSid: string;
  readonly apiVersion: string;
  readonly from: string;
  readonly to: string;
  readonly statusCallback: string | null;
  readonly statusCallbackMethod: HttpMethod;
  readonly statusCallbackEvents: ReadonlySet<ProgressEvent>;
  readonly timeoutSeconds: number;
}

/** A callback URL with its method. */
export interface Callback {
  readonly url: string;
  readonly method: HttpMethod;
}

/** The progress callbacks a REST call asked for (StatusCallback + StatusCallbackEvent). */
export interface ProgressCallback extends Callback {
  readonly events: readonly ProgressEvent[];
}

/** Final SIP status of the leg's INVITE so far, and why it failed when it did. */
export interface SipOutcome {
  readonly status: number;
  readonly reason: string | null;
  /** The server itself did not send the INVITE (no route, client not registered…). */
  readonly local?: boolean;
  /** A more specific Notification than the generic failure one was already written. */
  readonly notified?: boolean;
}

/**
 * What a call is given at its creation and never changes: who, where, and what it was asked to do.
 * Grouped so the context's updates (each a shallow copy of the context) do not copy it field by field.
 */
export interface CallOrigin {
  readonly sid: string;
  readonly accountSid: string;
  readonly direction: CallDirection;
  readonly from: string;
  readonly to: string;
  readonly parentCallSid: string | null;
  readonly apiVersion: string;
  readonly phoneNumberSid: string | null;
  readonly callerName: string | null;
  readonly forwardedFrom: string | null;
  readonly createdAt: number;
  /** Seconds the callee may ring before no-answer (spec: Timeout, default 60). */
  readonly timeoutSeconds: number;
  /** The REST call's markup and progress callbacks (outbound-api), else null. */
  readonly markup: MarkupTarget | null;
  readonly progress: ProgressCallback | null;
  /** The number's StatusCallback (inbound calls to a number that has one). */
  readonly numberCallback: Callback | null;
  /** Credentials for the next hop of a `<Dial><Sip username password>` (never persisted). */
  readonly credentials: { readonly username: string; readonly password: string } | null;
  /** Set on a USSD session (src/actors/ussd), which shares the call record and the live views. */
  readonly channel?: 'ussd';
}

/** The leg's SIP facts. */
export interface CallSip {
  /** Final SIP status of the leg's INVITE so far, and why it failed when it did. */
  readonly outcome: SipOutcome | null;
  /** The SIP dialog once established (plain data): another node can BYE it if this one dies. */
  readonly dialog: PersistedDialog | null;
  /** The ACK (inbound) or our ACK (outbound) confirmed the dialog. */
  readonly confirmed: boolean;
  /** The final response to this leg's INVITE (outbound legs): its Call-ID and X- headers. */
  readonly finalResponse: {
    readonly callId: string | null;
    readonly headers: Readonly<Record<string, string>>;
  } | null;
}

/** The leg's media. */
export interface CallMedia {
  /** The caller's SDP offer of an inbound leg, until its endpoint answers it. */
  readonly remoteSdp: string | null;
  /** Our SDP once the endpoint exists. */
  readonly localSdp: string | null;
  /** Conference room the endpoint is in (`AC…:name`), from the media engine. */
  readonly room: string | null;
  readonly muted: boolean;
}

/**
 * The call, as plain serialisable data (STYLE: context is the call's state). Times are epoch ms.
 * Live handles (SIP transactions, the media endpoint, the running interpreter) stay in the adapters,
 * keyed by the call sid, which is also the media endpoint id.
 *
 * Few top-level fields (at most ~16 with the optional ones of a transfer): XState copies the context
 * with `Object.assign({}, context, update)` on every `assign`, and V8 turns an object built that way
 * with more than ~19 properties into a slow dictionary (10 µs per copy instead of 0.4, slower reads).
 * Facts that change together or never are grouped (`origin`, `sip`, `media`).
 */
export interface CallContext {
  readonly origin: CallOrigin;
  readonly sip: CallSip;
  readonly media: CallMedia;
  /** Absolute ring deadline; timers are re-armed from here (XState does not persist timers). */
  readonly ringDeadline: number | null;
  readonly answeredAt: number | null;
  readonly endedAt: number | null;
  readonly endCause: EndCause | null;
  /** StatusCallback given on modification: requested when the call ends. */
  readonly endCallback: Callback | null;
  /** Progress callbacks sent so far: the next one's SequenceNumber. */
  readonly progressSent: number;
  /** A REST admission slot is held (released when the call ends). */
  readonly admitted: boolean;
  /** What runs the call now; null when nothing does. */
  readonly app: CallApp | null;
  readonly whisper: 'none' | 'running' | 'done';
  /** The leg it is bridged with by a `<Dial>`. */
  readonly peer: string | null;
  /** Moved out of its `<Dial>` by MoveConnectedCallLeg: the parent's Dial no longer ends it. */
  readonly detached: boolean;

  /** A REFER of the far end being looked up or carried out (this leg is the transferor). */
  readonly refer?: ReferRequest | null;
  /** This leg was transferred (it is the transferee). */
  readonly transfer?: Transfer | null;
  /** The leg its last `<Dial>` connected or failed to (OutboundCallSid, DialSip* on callbacks). */
  readonly dialed?: DialedLeg | null;
  /** A REFER this leg sent (`<Refer>`): its final response and the last NOTIFY's status. */
  readonly referOut?: {
    readonly response: number | null;
    readonly notify: number | null;
    readonly final: boolean;
  } | null;
}

export interface CallInput {
  readonly sid: string;
  readonly accountSid: string;
  readonly direction: CallDirection;
  readonly from: string;
  readonly to: string;
  readonly apiVersion: string;
  readonly createdAt: number;
  readonly parentCallSid?: string | null;
  readonly phoneNumberSid?: string | null;
  readonly callerName?: string | null;
  readonly forwardedFrom?: string | null;
  readonly timeoutSeconds?: number;
  readonly markup?: MarkupTarget | null;
  readonly progress?: ProgressCallback | null;
  readonly numberCallback?: Callback | null;
  readonly remoteSdp?: string | null;
  readonly credentials?: { readonly username: string; readonly password: string } | null;
  /** Inbound: what runs the call from the start (markup, or the client bridge). */
  readonly app?: CallApp | null;
}

/**
 * Events of a call, named by source (STYLE): the SIP adapter (`sip.*`), the media engine
 * (`media.*`), the REST layer (`http.*`), the app running the call and the Dialer (`app.*`), the
 * runtime (`call.*`). Events that record a moment carry `at` (epoch ms) so the machine stays pure.
 */
export type CallEvent =
  | { type: 'call.restored'; at: number }
  | { type: 'sip.ringing'; at: number }
  | {
      type: 'sip.answered';
      at: number;
      dialog?: PersistedDialog;
      sdp?: string;
      sipHeaders?: Readonly<Record<string, string>>;
    }
  | { type: 'sip.dialog'; dialog: PersistedDialog }
  | {
      type: 'sip.failed';
      status: number;
      reason: string;
      at: number;
      sipCallId?: string;
      sipHeaders?: Readonly<Record<string, string>>;
    }
  | { type: 'sip.bye'; at: number }
  | { type: 'sip.cancel'; at: number }
  | { type: 'media.lost'; reason: string; at: number }
  /** The inbound leg's endpoint answered the caller's offer with `sdp` (`createEndpoint`). */
  | { type: 'media.endpointReady'; sdp: string; at: number }
  /** The inbound leg's endpoint could not be made (`no-port`: the RTP port range is exhausted). */
  | { type: 'media.endpointFailed'; reason: string; at: number }
  | { type: 'media.room'; room: string | null }
  | { type: 'http.cancel'; at: number }
  | { type: 'http.complete'; at: number }
  | { type: 'http.mute'; muted: boolean; at: number }
  | { type: 'http.redirect'; to: MarkupTarget }
  | { type: 'http.move'; to: MarkupTarget; unbridge: boolean }
  | { type: 'http.endCallback'; callback: Callback }
  | { type: 'app.answer'; at: number }
  | { type: 'app.reject'; reason: 'rejected' | 'busy'; at: number }
  | { type: 'app.hangup'; at: number }
  | { type: 'app.done'; at: number }
  | { type: 'app.whisper'; url: string; method: HttpMethod }
  | { type: 'app.bridged'; peer: string | null; at: number }
  | { type: 'app.detach' }
  | { type: 'app.sendDigits'; digits: string }
  /** A REFER in the leg's dialog (the SIP adapter waits for its answer). */
  | { type: 'sip.refer'; refer: ReferRequest; at: number }
  /** The transferee's side of an accepted REFER: run `app` with the transfer's parameters. */
  | { type: 'app.transfer'; transfer: Transfer; app: MarkupTarget; at: number }
  /** `<Refer>`: send REFER to the far end (`sip.referResult`, then `sip.referNotify` follow). */
  | { type: 'app.refer'; referTo: string }
  /** A `<Dial>` of this call decided (the leg that answered, or the last that failed). */
  | { type: 'app.dialed'; leg: DialedLeg }
  | { type: 'sip.referResult'; status: number }
  | { type: 'sip.referNotify'; sipfrag: number | null; terminated: boolean }
  /** The final SIP status of the transferee's new leg (200 answered), for the transferor's NOTIFY. */
  | { type: 'app.referOutcome'; status: number; at: number }
  | { type: 'app.stopDigits' };

/** Why the call ended, beyond its status. */
export type EndCause =
  | 'remote-hangup'
  | 'local-hangup'
  | 'api'
  | 'canceled-by-caller'
  | 'rejected'
  | 'no-answer'
  | 'sip-failure'
  | 'media-lost'
  | 'node-lost';

/**
 * The call's domain events: everything else (status callbacks, the CDR, snapshots, metrics, live
 * views) subscribes to these and is never called from the call logic. `call` is the context after
 * the change. `call.ended` comes exactly once per call.
 */
export type CallEmitted =
  | { type: 'call.created'; call: CallContext; at: number }
  | { type: 'call.initiated'; call: CallContext; at: number }
  | { type: 'call.ringing'; call: CallContext; at: number }
  | { type: 'call.answered'; call: CallContext; at: number }
  | { type: 'call.confirmed'; call: CallContext; at: number }
  | { type: 'call.bridged'; call: CallContext; peer: string | null; at: number }
  | { type: 'call.muted'; call: CallContext; muted: boolean; at: number }
  | { type: 'call.whispered'; call: CallContext; at: number }
  /** A verb of the call's markup began (the interpreter's announcement, on the call's stream). */
  | { type: 'verb.started'; call: CallContext; verb: string; seq: number; at: number }
  | { type: 'verb.finished'; call: CallContext; verb: string; seq: number; outcome: string; at: number }
  | {
      type: 'call.ended';
      call: CallContext;
      status: CallStatus;
      cause: EndCause;
      sipStatus: number | null;
      duration: number;
      at: number;
    };
