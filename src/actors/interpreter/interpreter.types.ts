/**
 * Types of the markup interpreter actor: its input, plain serialisable context, events, verb
 * outcomes and the Notification codes it writes. See docs/interpreter.md.
 */
import type { CallDirection } from '../../store/call-store.js';
import type { HttpMethod } from '../../webhooks/index.js';
import type { MarkupFetchEvent } from './fetch-markup.js';
import type { VerbNode } from './markup/index.js';

/** Consecutive documents fetched without a media verb before the call is ended (R4). */
export const MAX_REDIRECT_CHAIN = 10;

/** Diagnostics written as Notifications per document; the rest are summarised in one more. */
export const MAX_DIAGNOSTIC_NOTIFICATIONS = 10;

/** API version reported in `ApiVersion` unless the number/client says otherwise. */
export const DEFAULT_API_VERSION = '2012-04-24';

/**
 * Notification codes written by the interpreter itself (Twilio catalogue,
 * https://www.twilio.com/docs/api/errors). Fetch failures (11100-11215, 11750 on the wire) are written
 * by the WebhookClient's `onFailure`; the parser's 11750/12100/12200 come with their diagnostics.
 */
export const InterpreterErrorCode = {
  /** 11200 HTTP retrieval failure: a `<Play>` URL could not be fetched. */
  RetrievalFailure: 11200,
  /** 11215 Too many redirects: the redirect-chain cap was reached. */
  RedirectLimit: 11215,
  /** 11750 Response body too large. */
  TooLarge: 11750,
  /** 12100 Document parse failure. */
  ParseFailure: 12100,
  /** 12200 Schema validation warning (also: `<Reject>` after the call was answered). */
  SchemaWarning: 12200,
  /** 12300 Invalid Content-Type of a markup response. */
  InvalidContentType: 12300,
  /** 12400 Internal failure while executing a verb (media, recording, SMS, email, answer). */
  InternalFailure: 12400,
} as const;
export type InterpreterErrorCode = (typeof InterpreterErrorCode)[keyof typeof InterpreterErrorCode];

/** The call the interpreter runs for: plain data, the source of the request parameters. */
export interface CallInfo {
  readonly callSid: string;
  readonly accountSid: string;
  readonly from: string;
  readonly to: string;
  readonly direction: CallDirection;
  /** Media endpoint of this leg (usually the call sid). */
  readonly endpointId: string;
  readonly apiVersion: string;
  readonly parentCallSid: string | null;
  /** SIP Diversion / History-Info, when the call was forwarded. */
  readonly forwardedFrom: string | null;
  /** Caller name (CNAM or the From display name), inbound only. */
  readonly callerName: string | null;
  /** Extra parameters sent with every request, e.g. `SipHeader_X-Foo` from the INVITE. */
  readonly extraParams: ReadonlyArray<readonly [string, string]>;
}

/** A markup request the interpreter is about to make (resolved URL, extra parameters). */
export interface PendingFetch {
  readonly url: string;
  readonly method: HttpMethod;
  /** Verb parameters (Digits, DialCallStatus…), sent after the call parameters. */
  readonly params: ReadonlyArray<readonly [string, string]>;
  readonly fallback: { readonly url: string; readonly method: HttpMethod } | null;
}

/** What the runtime starts an interpreter with (the leg and the application's URLs). */
export interface InterpreterInput {
  readonly call: Omit<
    CallInfo,
    'apiVersion' | 'parentCallSid' | 'forwardedFrom' | 'callerName' | 'extraParams'
  > &
    Partial<Pick<CallInfo, 'apiVersion' | 'parentCallSid' | 'forwardedFrom' | 'callerName' | 'extraParams'>>;
  /** Url / Method (VoiceUrl, application RcmlUrl, POST /Calls Url). */
  readonly url: string;
  readonly method?: HttpMethod;
  readonly fallbackUrl?: string | null;
  readonly fallbackMethod?: HttpMethod;
  /** True for calls that are up before markup runs (outbound-api, outbound-dial). */
  readonly answered?: boolean;
  /**
   * A `<Dial>` noun's `url` on the called party (whisper): the end of the document leaves the call
   * up for the bridge (output `document-ended`) instead of hanging up; `<Hangup>` still hangs up.
   */
  readonly whisper?: boolean;
}

/** Plain, serialisable context. */
export interface InterpreterContext {
  readonly call: CallInfo;
  readonly answered: boolean;
  readonly whisper: boolean;
  /** The next request to make, or the one in flight. */
  readonly request: PendingFetch | null;
  /** URL of the current document (relative verb URLs resolve against it). */
  readonly documentUrl: string | null;
  readonly program: readonly VerbNode[];
  /** Index of the verb running (or next to run) in `program`. */
  readonly index: number;
  /** Documents fetched in a row without a media verb (see MAX_REDIRECT_CHAIN). */
  readonly chain: number;
  /** Increments per verb started; makes media operation ids unique within the call. */
  readonly seq: number;
  /** The last verb outcome (what to do next). */
  readonly outcome: VerbOutcome | null;
}

/**
 * Events, named by source (STYLE): the REST layer redirects a live call (`POST /Calls/{sid}` with
 * Url); the runtime reports that the call leg ended (BYE, CANCEL, REST hangup, any terminal status);
 * the leg reports how the answer the interpreter asked for went (`AnswerOutcome`); a callback verb
 * actor reports its outcome (`verb.done`), and the fetch actor its document (`markup.fetched`).
 */
export type InterpreterEvent =
  | {
      readonly type: 'http.redirect';
      readonly url: string;
      readonly method?: HttpMethod;
      readonly fallbackUrl?: string | null;
      readonly fallbackMethod?: HttpMethod;
    }
  | { readonly type: 'call.ended' }
  | AnswerOutcome
  | VerbDone
  | MarkupFetchEvent;

/**
 * A verb actor that is not a promise (a timer: `<Pause>`) tells its interpreter it is done with this
 * event, carrying its outcome as a promise verb's done event would.
 */
export interface VerbDone {
  readonly type: 'verb.done';
  readonly output: VerbOutcome;
}

/**
 * The outcome of `CallControl.answer`, sent back by the call leg: `call.answered` once media can
 * flow (the ACK of our 200, or the leg was up already), `call.answerFailed` when the leg can no
 * longer be answered (gone, ended first, or in a state that cannot answer). Exactly one per answer.
 */
export type AnswerOutcome = { readonly type: 'call.answered' } | { readonly type: 'call.answerFailed' };

/** What a verb tells the interpreter to do next. */
export type VerbOutcome =
  | { readonly kind: 'next' }
  /** Fetch a new document (action URL, `<Redirect>`); `params` follow the call parameters. */
  | {
      readonly kind: 'fetch';
      readonly url: string;
      readonly method: HttpMethod;
      readonly params: ReadonlyArray<readonly [string, string]>;
    }
  | { readonly kind: 'hangup' }
  | { readonly kind: 'reject'; readonly reason: 'rejected' | 'busy' };

/** Input of every verb actor. */
export interface VerbInput {
  readonly node: VerbNode;
  readonly call: CallInfo;
  readonly answered: boolean;
  /** Absolute URL of the document the verb came from. */
  readonly documentUrl: string;
  /** Unique prefix for media operation ids of this verb run. */
  readonly opId: string;
}

/** How the interpretation ended (the actor's output). */
export type InterpreterOutput =
  | { readonly end: 'hangup' }
  | { readonly end: 'rejected'; readonly reason: 'rejected' | 'busy' }
  /** The call leg ended first (caller hung up, REST completed it). */
  | { readonly end: 'call-ended' }
  /** A whisper document ended with the call still up. */
  | { readonly end: 'document-ended' };

/**
 * What the interpreter announces about its verbs (the call's event stream carries them): a verb
 * began, or ended with its outcome (`error` when it failed). `seq` numbers the verbs of the call.
 */
export type InterpreterEmitted =
  | { readonly type: 'verb.started'; readonly verb: string; readonly seq: number }
  | { readonly type: 'verb.finished'; readonly verb: string; readonly seq: number; readonly outcome: string };
