/**
 * Request parameters sent to the markup server (Twilio "voice request" / Restcomm RCML parameters;
 * the full list with semantics is in docs/interpreter.md) and URL resolution for relative verb URLs.
 */
import type { CallInfo } from './interpreter.types.js';

/** `CallStatus` values the markup server sees. */
export type CallStatusParam = 'ringing' | 'in-progress' | 'completed';

/** Twilio's `CallStatus` as seen by the markup: `ringing` until answered, then `in-progress`. */
export function callStatusParam(answered: boolean): CallStatusParam {
  return answered ? 'in-progress' : 'ringing';
}

/**
 * The parameters of every request: CallSid, AccountSid, From, To, CallStatus, ApiVersion, Direction,
 * then the optional ForwardedFrom, CallerName, ParentCallSid, then the call's extra parameters
 * (SIP headers), then `verbParams` (Digits, RecordingUrl, DialCallStatus...).
 */
export function requestParams(
  call: CallInfo,
  status: CallStatusParam,
  verbParams: ReadonlyArray<readonly [string, string]> = [],
): Array<readonly [string, string]> {
  const out: Array<readonly [string, string]> = [
    ['CallSid', call.callSid],
    ['AccountSid', call.accountSid],
    ['From', call.from],
    ['To', call.to],
    ['CallStatus', status],
    ['ApiVersion', call.apiVersion],
    ['Direction', call.direction],
  ];
  if (call.forwardedFrom) out.push(['ForwardedFrom', call.forwardedFrom]);
  if (call.callerName) out.push(['CallerName', call.callerName]);
  if (call.parentCallSid) out.push(['ParentCallSid', call.parentCallSid]);
  out.push(...call.extraParams, ...verbParams);
  return out;
}

/**
 * Resolves a verb URL (action, Redirect, Play) against the document it came from, as a browser
 * would (TwiML: relative URLs are relative to the document URL). Returns null when it cannot be
 * resolved to http(s).
 */
export function resolveUrl(url: string, documentUrl: string | null): string | null {
  try {
    const u = documentUrl ? new URL(url, documentUrl) : new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}
