/**
 * A USSD session as the live views of calls see it (the supervisor's list and stream): a call
 * context with `channel: 'ussd'`, which they show as type USSD. Only the members they read carry
 * the session's values; the voice-only ones stay at their idle values.
 */
import type { CallContext } from '../call/call.types.js';
import type { UssdContext } from './ussd.types.js';

export function callViewOf(s: UssdContext): CallContext {
  return {
    origin: {
      sid: s.sid,
      accountSid: s.accountSid,
      direction: s.direction,
      from: s.from,
      to: s.to,
      parentCallSid: null,
      apiVersion: s.apiVersion,
      phoneNumberSid: s.phoneNumberSid,
      callerName: null,
      forwardedFrom: null,
      createdAt: s.createdAt,
      timeoutSeconds: 0,
      markup: null,
      progress: null,
      numberCallback: null,
      credentials: null,
      channel: 'ussd',
    },
    sip: {
      outcome: s.sipStatus === null ? null : { status: s.sipStatus, reason: null },
      dialog: null,
      confirmed: s.answeredAt !== null,
      finalResponse: null,
    },
    media: { remoteSdp: null, localSdp: null, room: null, muted: false },
    ringDeadline: null,
    answeredAt: s.answeredAt,
    endedAt: s.endedAt,
    endCause: null,
    endCallback: null,
    progressSent: 0,
    admitted: false,
    app: null,
    whisper: 'none',
    peer: null,
    detached: false,
  };
}
