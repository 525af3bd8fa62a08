/**
 * Call progress events (spec §Events "Call progress"): which events a REST call asked for and the
 * parameters of each callback. Pure; the runtime sends them through the WebhookClient.
 *
 * - `StatusCallbackEvent` lists initiated, ringing, answered, completed, comma- or space-separated,
 *   in one parameter or repeated; with a StatusCallback but no events only `completed` is sent.
 * - Parameters: those of a voice markup request (CallSid, AccountSid, From, To, CallStatus,
 *   ApiVersion, Direction, ForwardedFrom, CallerName) plus CallbackSource=call-progress-events,
 *   SequenceNumber (0, 1, … per call in the order sent), Timestamp (RFC 2822, UTC) and, on
 *   completed, CallDuration (seconds) and SipResponseCode when known — Twilio's names.
 */
import { rfc2822 } from '../../dates.js';
import type { CallDirection, CallStatus } from '../../store/call-store.js';

export const ProgressEvent = {
  Initiated: 'initiated',
  Ringing: 'ringing',
  Answered: 'answered',
  Completed: 'completed',
} as const;
export type ProgressEvent = (typeof ProgressEvent)[keyof typeof ProgressEvent];
export const PROGRESS_EVENTS: readonly ProgressEvent[] = Object.values(ProgressEvent);

/**
 * Parses StatusCallbackEvent. Twilio's SDKs send the parameter repeated (`StatusCallbackEvent=initiated&
 * StatusCallbackEvent=ringing`) and others send one space- or comma-separated value: every value of
 * every occurrence counts. `unknown` names the first event that is not one of the four.
 */
export function parseProgressEvents(
  value: string | readonly string[] | undefined,
): { ok: true; events: ReadonlySet<ProgressEvent> } | { ok: false; unknown: string } {
  const values = value === undefined ? [] : typeof value === 'string' ? [value] : value;
  const events = new Set<ProgressEvent>();
  for (const raw of values.flatMap((v) => v.split(/[\s,]+/))) {
    const e = raw.trim().toLowerCase();
    if (!e) continue;
    if (!(PROGRESS_EVENTS as readonly string[]).includes(e)) return { ok: false, unknown: raw };
    events.add(e as ProgressEvent);
  }
  if (events.size === 0) events.add(ProgressEvent.Completed);
  return { ok: true, events };
}

/** The event a REST-visible status change stands for (queued → initiated is sent on dial). */
export function progressEventOf(status: CallStatus): ProgressEvent {
  switch (status) {
    case 'queued':
      return ProgressEvent.Initiated;
    case 'ringing':
      return ProgressEvent.Ringing;
    case 'in-progress':
      return ProgressEvent.Answered;
    default:
      return ProgressEvent.Completed;
  }
}

export interface ProgressCall {
  readonly sid: string;
  readonly accountSid: string;
  readonly from: string;
  readonly to: string;
  readonly direction: CallDirection;
  readonly apiVersion: string;
  readonly forwardedFrom: string | null;
  readonly callerName: string | null;
  /** Final SIP status of the leg's INVITE, when known (sent with the completed event). */
  readonly sipResponseCode?: number | null;
  /** The leg its last `<Dial>` reached (OutboundCallSid, DialSip* on the number's callbacks). */
  readonly dialed?: {
    readonly sid: string;
    readonly sipCallId: string | null;
    readonly sipStatus: number | null;
    readonly sipHeaders: Readonly<Record<string, string>>;
  } | null;
  /** A call transferred by REFER: ReferTarget, Transferor, Transferee (spec §Events). */
  readonly transfer?: {
    readonly referTarget: string;
    readonly transferor: string;
    readonly transferee: string;
  } | null;
}

/** The call parameters every voice request carries (spec §Events: "all parameters of a voice request"). */
function callParams(call: ProgressCall, status: string): Record<string, string> {
  return {
    CallSid: call.sid,
    AccountSid: call.accountSid,
    From: call.from,
    To: call.to,
    CallStatus: status,
    ApiVersion: call.apiVersion,
    Direction: call.direction,
    ForwardedFrom: call.forwardedFrom ?? '',
    CallerName: call.callerName ?? '',
    ...(call.transfer
      ? {
          ReferTarget: call.transfer.referTarget,
          Transferor: call.transfer.transferor,
          Transferee: call.transfer.transferee,
        }
      : {}),
  };
}

/** The parameters of one call progress callback. */
export function progressParams(
  call: ProgressCall,
  status: CallStatus | 'initiated',
  sequence: number,
  at: number,
  durationSeconds?: number,
): Record<string, string> {
  return {
    ...callParams(call, status),
    CallbackSource: 'call-progress-events',
    SequenceNumber: String(sequence),
    Timestamp: rfc2822(new Date(at)),
    ...(durationSeconds !== undefined ? { CallDuration: String(durationSeconds) } : {}),
    ...(durationSeconds !== undefined && call.sipResponseCode != null
      ? { SipResponseCode: String(call.sipResponseCode) }
      : {}),
  };
}

/**
 * Parameters of an incoming number's StatusCallback (spec §Events "Incoming phone number status"):
 * sent on ringing, in-progress and completed of calls to the number.
 */
export function numberStatusParams(
  call: ProgressCall,
  status: 'ringing' | 'in-progress' | 'completed',
  instanceId: string,
): Record<string, string> {
  return {
    ...callParams(call, status),
    InstanceId: instanceId,
    CallTimestamp: rfc2822(new Date()),
    ...dialedParams(call.dialed ?? null),
  };
}

/**
 * The leg a `<Dial>` of the call reached, as Restcomm names it: OutboundCallSid, and for its SIP
 * outcome DialSipCallId, DialSipResponseCode and DialSipHeader_<X- header> of the final response.
 */
function dialedParams(d: ProgressCall['dialed'] | null): Record<string, string> {
  if (!d) return {};
  const out: Record<string, string> = { OutboundCallSid: d.sid };
  if (d.sipCallId) out.DialSipCallId = d.sipCallId;
  if (d.sipStatus !== null) out.DialSipResponseCode = String(d.sipStatus);
  for (const [name, value] of Object.entries(d.sipHeaders)) out[`DialSipHeader_${name}`] = value;
  return out;
}
