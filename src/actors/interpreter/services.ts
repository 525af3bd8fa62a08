/**
 * What the markup interpreter needs from the world, in domain words. The composition root builds one
 * `InterpreterServices` per process and passes it to `createInterpreterMachine`; everything that is
 * per call (sids, numbers, the endpoint id, URLs) travels in the actor's input and context, so the
 * services are stateless façades keyed by sid (STYLE: live handles stay in adapters).
 *
 * Nothing here imports a network library: the SIP side is reached through `CallControl` and `Dialer`,
 * which the call runtime implements over `src/sip/port.ts` and the call actor; markup and action
 * requests go through `MarkupFetcher`, normally `webhookFetcher(new WebhookClient(...))`.
 */
import type { MediaEvent, MediaPort } from '../../media/port.js';
import type { NotifyInput } from '../../notifications/notifier.js';
import type { HttpMethod, Params, WebhookClient, WebhookResult } from '../../webhooks/index.js';
import type { RemoteConferences } from '../conference/remote-conferences.js';
import type { AnswerOutcome } from './interpreter.types.js';
import type { ConferenceRooms } from './verbs/conference-rooms.js';

/** Where the outcome of a command goes: the actor that gave it (its `self`). */
export interface ReplyTo<E> {
  send(event: E): void;
}

/**
 * Intents the interpreter sends to its call leg. The runtime forwards them to the call actor as
 * `app.answer`, `app.reject` and `app.hangup` (src/actors/call/call.types.ts). `answer` is a command
 * whose outcome comes back as an event; `sendDigits` and `refer` are awaited; `reject` and `hangup`
 * end the interpretation at once.
 */
export interface CallControl {
  /**
   * Answers the inbound leg (SIP 200 with the media endpoint's SDP). Never throws; its outcome is
   * sent to `replyTo`, once: `call.answered` when media can flow (on the ACK; at once when the leg
   * is up already), `call.answerFailed` when the leg can no longer be answered (caller gone, the
   * leg ended first). An outcome that arrives after the interpreter moved on finds no transition.
   */
  answer(callSid: string, replyTo: ReplyTo<AnswerOutcome>): void;
  /** Refuses the unanswered leg: `rejected` → SIP 603 Decline, `busy` → 486 Busy Here. */
  reject(callSid: string, reason: 'rejected' | 'busy'): void;
  /** Ends the leg in whatever state it is (BYE when answered). */
  hangup(callSid: string): void;
  /**
   * Sends DTMF to the far end (`<Play digits>`; `w` = wait 0.5 s), e.g. as SIP INFO
   * application/dtmf-relay or RFC 4733 events. Resolves when sent.
   */
  sendDigits(callSid: string, digits: string, signal: AbortSignal): Promise<void>;
  /**
   * Sends REFER to the far end of the answered leg (`<Refer>`, RFC 3515 blind transfer) and waits
   * for its final response and, once accepted, for the NOTIFY carrying the new call's final status
   * (bounded by the subscription's life). Never rejects for SIP outcomes; must honour `signal`.
   */
  refer(callSid: string, referTo: string, signal: AbortSignal): Promise<ReferOutcome>;
}

/** What became of a `<Refer>`: the REFER's final response and the last NOTIFY's sipfrag status. */
export interface ReferOutcome {
  readonly referStatus: number;
  /** Null when no NOTIFY with a status came. */
  readonly notifyStatus: number | null;
  /** The leg ended before the transfer reported a final status. */
  readonly ended: boolean;
}

/** One destination of a `<Dial>`, from its nouns (or its bare text as a Number). */
export type DialTarget =
  | {
      readonly kind: 'number';
      readonly number: string;
      readonly sendDigits: string | null;
      readonly url: string | null;
      readonly method: HttpMethod;
    }
  | {
      readonly kind: 'client';
      readonly name: string;
      readonly url: string | null;
      readonly method: HttpMethod;
    }
  | {
      readonly kind: 'sip';
      readonly uri: string;
      readonly username: string | null;
      readonly password: string | null;
      readonly url: string | null;
      readonly method: HttpMethod;
    };

/** What the interpreter asks the Dialer to do for a `<Dial>` of numbers, clients or SIP URIs. */
export interface DialRequest {
  /** The parent (calling) leg. */
  readonly callSid: string;
  readonly accountSid: string;
  /** The parent's media endpoint, to bridge with the new leg once it answers. */
  readonly endpointId: string;
  /** Caller ID of the new legs (Dial `callerId`, default the parent's From). */
  readonly callerId: string;
  /** Rung in parallel (Twilio: several nouns ring at once; the first to answer wins). */
  readonly targets: readonly DialTarget[];
  /** Seconds to ring before `no-answer` (Dial `timeout`). */
  readonly timeoutSeconds: number;
  /** Seconds the bridged call may last (Dial `timeLimit`). */
  readonly timeLimitSeconds: number;
  /** Dial `record` (Twilio vocabulary). */
  readonly record: string;
  /** Dial `hangupOnStar`: `*` from the caller ends the bridge and continues the markup. */
  readonly hangupOnStar: boolean;
}

/** Twilio `DialCallStatus` values. */
export type DialCallStatus = 'completed' | 'answered' | 'busy' | 'no-answer' | 'failed' | 'canceled';

/** The result of a `<Dial>` once the bridge has ended or never came up. */
export interface DialOutcome {
  readonly status: DialCallStatus;
  /** Sid of the answered child leg (null when none answered). */
  readonly dialCallSid: string | null;
  /** Seconds the child leg was connected (0 when it never answered). */
  readonly durationSeconds: number;
  /** Final SIP status of the child leg when it failed (486, 404…), for `DialSipResponseCode`. */
  readonly sipResponseCode?: number | null;
  /** Set when Dial `record` produced a recording. */
  readonly recording?: {
    readonly sid: string;
    readonly url: string;
    readonly durationSeconds: number;
  } | null;
}

/**
 * Places and bridges the outbound legs of a `<Dial>` (implemented by the call runtime over the SIP
 * core and the routing policy). Resolves when the bridge is over: the called party hung up, the
 * timeout or time limit passed, the caller pressed `*` with hangupOnStar, or no leg answered.
 * When `signal` aborts (the caller hung up, a REST redirect) every leg it started must be ended and
 * the promise may settle in any way (its result is ignored). Never rejects for call outcomes.
 */
export interface Dialer {
  dial(request: DialRequest, signal: AbortSignal): Promise<DialOutcome>;
}

/** A markup or action request: the WebhookRequest without the signing key (looked up per account). */
export interface MarkupRequest {
  readonly url: string;
  readonly method: HttpMethod;
  readonly params: Params;
  readonly fallback: { readonly url: string; readonly method: HttpMethod } | null;
  readonly accountSid: string;
  readonly callSid: string;
}

/** Fetches markup through the WebhookClient (signed, timeouts, retries, fallback, Notifications). */
export type MarkupFetcher = (request: MarkupRequest) => Promise<WebhookResult>;

/** `<Sms>` during a call. */
export interface SmsRequest {
  readonly accountSid: string;
  readonly callSid: string;
  readonly from: string;
  readonly to: string;
  readonly body: string;
  readonly statusCallback: string | null;
}

/** `SmsStatus` as Twilio's former `<Sms>` verb posted it to its action. */
export interface SmsOutcome {
  readonly sid: string;
  readonly status: 'sending' | 'sent' | 'queued' | 'failed';
}

/** `<Email>` during a call. */
export interface EmailRequest {
  readonly accountSid: string;
  readonly callSid: string;
  readonly to: string;
  readonly from: string | null;
  readonly cc: string | null;
  readonly bcc: string | null;
  readonly subject: string | null;
  readonly body: string;
  readonly type: 'text/plain' | 'text/html';
}

/** Result of `sendEmail`. */
export interface EmailOutcome {
  readonly sid: string;
  readonly status: 'sent' | 'queued' | 'failed';
}

/**
 * A finished `<Record>`: the media engine has written the WAV through the recording-storage port under
 * `recordingSid`; the service writes the Recording row (spec §Recording) and returns its public URL.
 */
export interface RecordingRequest {
  readonly recordingSid: string;
  readonly accountSid: string;
  readonly callSid: string;
  readonly durationSeconds: number;
}

/** The stored Recording, as reported to the markup server. */
export interface CreatedRecording {
  readonly sid: string;
  /** Public URL of the recording (`…/Recordings/RE….wav` without the extension, as Twilio). */
  readonly url: string;
  readonly durationSeconds: number;
}

/** Per-endpoint view of the media event stream (see `MediaEventRouter`). */
export interface MediaEvents {
  /** Calls `listener` for every event about `endpointId`; returns the unsubscribe function. */
  on(endpointId: string, listener: (event: MediaEvent) => void): () => void;
}

/** Everything the interpreter and its verbs use. One instance per process. */
export interface InterpreterServices {
  readonly media: MediaPort;
  readonly mediaEvents: MediaEvents;
  readonly fetch: MarkupFetcher;
  readonly call: CallControl;
  readonly dialer: Dialer;
  sendSms(request: SmsRequest, signal: AbortSignal): Promise<SmsOutcome>;
  sendEmail(request: EmailRequest, signal: AbortSignal): Promise<EmailOutcome>;
  createRecording(request: RecordingRequest): Promise<CreatedRecording>;
  /** Writes a Notification (never throws; `Notifier.notify` fits). */
  notify(input: NotifyInput): unknown;
  /** This node's conference rooms (shared with the REST layer); one of its own when not given. */
  readonly conferences?: ConferenceRooms;
  /** Rooms across the cluster's nodes; without it, every room runs on this node. */
  readonly remoteConferences?: Pick<RemoteConferences, 'join'>;
  /**
   * Waits `ms` (`<Pause>` outside a Gather); resolves early never, rejects when `signal` aborts.
   * Defaults to a `setTimeout` timer; tests may inject a clock.
   */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/**
 * Fans one MediaPort subscription out per endpoint, so N live calls cost O(1) per event instead of N
 * listeners each filtering every event.
 */
export class MediaEventRouter implements MediaEvents {
  private readonly listeners = new Map<string, Set<(event: MediaEvent) => void>>();
  private readonly unsubscribe: () => void;

  constructor(port: MediaPort) {
    this.unsubscribe = port.subscribe((event) => this.dispatch(event));
  }

  on(endpointId: string, listener: (event: MediaEvent) => void): () => void {
    let set = this.listeners.get(endpointId);
    if (!set) {
      set = new Set();
      this.listeners.set(endpointId, set);
    }
    set.add(listener);
    return () => {
      const s = this.listeners.get(endpointId);
      if (!s) return;
      s.delete(listener);
      if (s.size === 0) this.listeners.delete(endpointId);
    };
  }

  /** Stops listening to the port. */
  close(): void {
    this.unsubscribe();
    this.listeners.clear();
  }

  private dispatch(event: MediaEvent): void {
    const id = event.type === 'media.endpointReady' ? event.endpoint.endpointId : event.endpointId;
    const set = this.listeners.get(id);
    if (!set) return;
    for (const l of [...set]) l(event);
  }
}

/**
 * The standard `MarkupFetcher`: the process's WebhookClient plus a lookup of the account's AuthToken
 * (the signing key). `context.callSid` reaches the client's Notifications.
 */
export function webhookFetcher(
  client: Pick<WebhookClient, 'request'>,
  authTokenOf: (accountSid: string) => string | Promise<string>,
): MarkupFetcher {
  return async (r) =>
    client.request({
      url: r.url,
      method: r.method,
      params: r.params,
      accountSid: r.accountSid,
      authToken: await authTokenOf(r.accountSid),
      fallback: r.fallback,
      context: { callSid: r.callSid },
    });
}
