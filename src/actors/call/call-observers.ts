/**
 * Everything that follows a call without being part of it: the call detail record, progress and
 * number callbacks, failure Notifications, snapshots and metrics. Each is an observer of the call's
 * domain events (call.types.ts `CallEmitted`); none is called from the call logic.
 *
 * The bus runs a call's events through the observers one at a time, in order (record updates
 * before the callbacks that report them; a pool may otherwise reorder queries); calls are
 * independent of each other.
 */
import type { Logger } from '../../logger.js';
import type { NotifyInput } from '../../notifications/notifier.js';
import { SipNotificationCode } from '../../sip/port.js';
import { type CallStatus, type CallStore, CallStatus as S } from '../../store/call-store.js';
import type { HttpMethod } from '../../webhooks/index.js';
import { type Observer, OrderedEventBus } from '../ordered-event-bus.js';
import type { CallContext, CallEmitted, CallOrigin } from './call.types.js';
import { numberStatusParams, ProgressEvent, progressEventOf, progressParams } from './status-callbacks.js';

export type CallObserver = Observer<CallEmitted>;

/** The calls' event bus: a call's events in order, calls independent of each other. */
export class CallEventBus extends OrderedEventBus<CallEmitted> {
  constructor(logger: Logger) {
    super(logger, (e) => e.call.origin.sid, { key: 'callSid', kind: 'call' });
  }
}

/** The call detail record in the system of record. */
export function cdrWriter(calls: Pick<CallStore, 'patch'>, logger: Logger): CallObserver {
  return (e) => {
    const sid = e.call.origin.sid;
    const warn = (err: unknown) => logger.warn({ err, callSid: sid }, 'call record not updated');
    switch (e.type) {
      case 'call.ringing':
        // An inbound record is written ringing.
        return e.call.origin.direction === 'inbound'
          ? undefined
          : calls.patch(sid, { status: S.Ringing }).catch(warn);
      case 'call.answered':
        return calls
          .patch(sid, { status: S.InProgress, startTime: new Date(e.at), sipResponseCode: 200 })
          .catch(warn);
      case 'call.ended':
        return calls
          .patch(sid, {
            status: e.status,
            endTime: new Date(e.at),
            duration: e.duration,
            sipResponseCode: e.sipStatus,
          })
          .catch(warn);
      default:
        return undefined;
    }
  };
}

/** Sends a signed callback about a call (with its account's AuthToken). */
export type SendCallback = (
  call: Pick<CallOrigin, 'sid' | 'accountSid'>,
  url: string,
  method: HttpMethod,
  params: Record<string, string>,
) => Promise<void>;

/**
 * Progress callbacks of REST calls (spec §Events "Call progress"), the number's StatusCallback
 * (§"Incoming phone number status") and the StatusCallback given on modification.
 */
export function statusCallbacks(send: SendCallback, instanceId: string): CallObserver {
  const progress = async (
    call: CallContext,
    event: ProgressEvent,
    status: CallStatus | 'initiated',
    at: number,
    duration?: number,
  ) => {
    const p = call.origin.progress;
    if (!p?.events.includes(event)) return;
    await send(
      call.origin,
      p.url,
      p.method,
      progressParams(record(call), status, call.progressSent, at, duration),
    );
  };
  const number = async (call: CallContext, status: 'ringing' | 'in-progress' | 'completed') => {
    const n = call.origin.numberCallback;
    if (n) await send(call.origin, n.url, n.method, numberStatusParams(record(call), status, instanceId));
  };
  const handle = async (e: CallEmitted): Promise<void> => {
    const call = e.call;
    switch (e.type) {
      case 'call.initiated':
        return progress(call, ProgressEvent.Initiated, 'initiated', e.at);
      case 'call.ringing':
        if (call.origin.direction === 'inbound') return number(call, 'ringing');
        return progress(call, ProgressEvent.Ringing, S.Ringing, e.at);
      case 'call.answered':
        await number(call, 'in-progress');
        return progress(call, ProgressEvent.Answered, S.InProgress, e.at);
      case 'call.ended': {
        const ended = { ...record(call), sipResponseCode: e.sipStatus };
        const asked = call.origin.progress?.events.includes(progressEventOf(e.status)) ?? false;
        const end = call.endCallback;
        await Promise.all([
          asked
            ? send(
                call.origin,
                call.origin.progress!.url,
                call.origin.progress!.method,
                progressParams(ended, e.status, call.progressSent, e.at, e.duration),
              )
            : undefined,
          end
            ? send(
                call.origin,
                end.url,
                end.method,
                progressParams(ended, e.status, call.progressSent + (asked ? 1 : 0), e.at, e.duration),
              )
            : undefined,
          e.status === S.Completed ? number(call, 'completed') : undefined,
        ]);
        return;
      }
      default:
        return;
    }
  };
  // Calls without any callback (most inbound ones without a number StatusCallback) cost nothing here.
  return (e) =>
    e.call.origin.progress !== null || e.call.origin.numberCallback !== null || e.call.endCallback !== null
      ? handle(e)
      : undefined;
}

/** The fields of a call the callback parameters name. */
function record(call: CallContext) {
  return {
    sid: call.origin.sid,
    accountSid: call.origin.accountSid,
    from: call.origin.from,
    to: call.origin.to,
    direction: call.origin.direction,
    apiVersion: call.origin.apiVersion,
    forwardedFrom: call.origin.forwardedFrom,
    callerName: call.origin.callerName,
    sipResponseCode: call.sip.outcome?.status ?? null,
    transfer: call.transfer ?? null,
    dialed: call.dialed ?? null,
  };
}

/**
 * Notification codes of a failed outbound leg (Twilio's Dial catalogue): 13224 "cannot call this
 * number or it is invalid; no carrier could deliver the call", 13225 "forbidden phone number".
 */
export const CallFailureCode = {
  NotDelivered: 13224,
  TargetRefused: SipNotificationCode.ForbiddenDestination,
} as const;

/**
 * A leg that failed, or that the server could not send at all, tells its account why: the SIP status
 * and reason the far end gave, or why no INVITE went out (no route, client not registered, target
 * refused or invalid). 13225 when a policy refused the target, else 13224. Busy and no answer from
 * the far end are outcomes, not errors: no Notification.
 */
export function failureNotifier(notify: (input: NotifyInput) => unknown): CallObserver {
  return (e) => {
    if (e.type !== 'call.ended' || e.cause === 'node-lost') return;
    const failure = e.call.sip.outcome;
    if ((e.status !== S.Failed && !failure?.local) || failure?.notified) return;
    const why = failure?.reason ?? (failure ? `SIP ${failure.status}` : 'no SIP response');
    notify({
      accountSid: e.call.origin.accountSid,
      callSid: e.call.origin.sid,
      errorCode: failure?.status === 403 ? CallFailureCode.TargetRefused : CallFailureCode.NotDelivered,
      log: 0,
      messageText: `Call to ${e.call.origin.to} failed: ${why}`,
    });
  };
}
