import type { PersistedDialog } from '../../sip/port.js';
import type { CallDirection, CallStatus } from '../../store/call-store.js';

/** Plain, serialisable context of a call leg actor. Times are epoch milliseconds. */
export interface CallContext {
  readonly sid: string;
  readonly accountSid: string;
  readonly direction: CallDirection;
  readonly from: string;
  readonly to: string;
  readonly parentCallSid: string | null;
  /** Seconds the callee may ring before no-answer (spec: Timeout, default 60). */
  readonly timeoutSeconds: number;
  /** Absolute ring deadline; re-armed from here after a restore (XState does not persist timers). */
  readonly ringDeadline: number | null;
  readonly createdAt: number;
  readonly answeredAt: number | null;
  readonly endedAt: number | null;
  /** Final SIP status of a failed attempt (486, 404, 487...), when known. */
  readonly sipStatus: number | null;
  /** The SIP dialog once established (plain data, no connection): recovery sends BYE with it. */
  readonly dialog: PersistedDialog | null;
}

export interface CallInput {
  readonly sid: string;
  readonly accountSid: string;
  readonly direction: CallDirection;
  readonly from: string;
  readonly to: string;
  readonly parentCallSid?: string | null;
  readonly timeoutSeconds?: number;
  readonly createdAt: number;
}

/**
 * Events of a call leg, named by source (STYLE): the SIP adapter (`sip.*`), the REST layer
 * (`http.*`), the markup interpreter (`app.*`), the runtime (`call.*`). Events that record a moment
 * carry `at` (epoch ms) so the machine stays pure.
 */
export type CallEvent =
  | { type: 'call.dial'; at: number }
  | { type: 'call.restored' }
  | { type: 'sip.ringing'; at: number }
  | { type: 'sip.answered'; at: number; dialog?: PersistedDialog }
  | { type: 'sip.dialog'; dialog: PersistedDialog }
  | { type: 'sip.failed'; status: number; at: number }
  | { type: 'sip.bye'; at: number }
  | { type: 'sip.cancel'; at: number }
  | { type: 'http.cancel'; at: number }
  | { type: 'http.complete'; at: number }
  | { type: 'app.answer'; at: number }
  | { type: 'app.reject'; reason: 'rejected' | 'busy'; at: number }
  | { type: 'app.hangup'; at: number };

/**
 * What the actor asks of the world; the runtime subscribes (`actor.on`) and drives the ports.
 * `call.status` is emitted on every REST-visible status change and `call.ended` exactly once.
 */
export type CallEmitted =
  | { type: 'sip.placeCall'; callSid: string }
  | { type: 'sip.cancel'; callSid: string }
  | { type: 'sip.hangUp'; callSid: string }
  | { type: 'sip.answer'; callSid: string }
  | { type: 'sip.reject'; callSid: string; status: number }
  | { type: 'call.status'; callSid: string; status: CallStatus; at: number }
  | { type: 'call.ended'; callSid: string; status: CallStatus; at: number; duration: number };
