/**
 * The call machine's implementations (STYLE: named, in a sibling file, so call.machine.ts reads like
 * the state table): guards, the ring delay, the invoked waits and the actions — pure context updates
 * and domain events, and the effects the composition root gives as `CallEffects`.
 */
import { assign, emit, fromPromise, setup } from 'xstate';
import { type PlaceCall, REFER_SUBSCRIPTION_SECONDS } from '../../sip/port.js';
import type { CallStatus } from '../../store/call-store.js';
import type {
  CallApp,
  CallContext,
  CallEmitted,
  CallEvent,
  CallInput,
  EndCause,
  ReferPlan,
  ReferRequest,
} from './call.types.js';
import { type CallEffects, ENDPOINT_TIMEOUT_MS, PlacementError, ReferRefusal } from './call-effects.js';
import { answeredSeconds } from './records.js';
import type { ProgressEvent } from './status-callbacks.js';

/** SIP final statuses (RFC 3261 §21) that mean the callee is busy or did not answer. */
const BUSY = new Set([486, 600, 603]);
const NO_ANSWER = new Set([408, 480, 487]);

const at = (e: CallEvent | { type: string }) => ('at' in e && typeof e.at === 'number' ? e.at : Date.now());
const failedStatus = (e: { type: string; status?: number; error?: unknown }): number =>
  e.type === 'sip.failed' ? (e.status ?? 500) : e.error instanceof PlacementError ? e.error.status : 500;
const isNoPort = (e: CallEvent) => e.type === 'media.endpointFailed' && e.reason === 'no-port';

/** Retry-After of a 503 for an exhausted RTP port range, seconds. */
const NO_MEDIA_RETRY_AFTER_SECONDS = 30;

export const DEFAULT_RING_TIMEOUT_SECONDS = 60;

export function initialContext(input: CallInput): CallContext {
  return {
    sid: input.sid,
    accountSid: input.accountSid,
    direction: input.direction,
    from: input.from,
    to: input.to,
    parentCallSid: input.parentCallSid ?? null,
    apiVersion: input.apiVersion,
    phoneNumberSid: input.phoneNumberSid ?? null,
    callerName: input.callerName ?? null,
    forwardedFrom: input.forwardedFrom ?? null,
    createdAt: input.createdAt,
    timeoutSeconds: input.timeoutSeconds ?? DEFAULT_RING_TIMEOUT_SECONDS,
    ringDeadline: null,
    answeredAt: null,
    endedAt: null,
    endCause: null,
    markup: input.markup ?? null,
    progress: input.progress ?? null,
    numberCallback: input.numberCallback ?? null,
    endCallback: null,
    progressSent: 0,
    sipOutcome: null,
    dialog: null,
    confirmed: false,
    remoteSdp: input.remoteSdp ?? null,
    localSdp: null,
    credentials: input.credentials ?? null,
    admitted: false,
    app: input.app ?? null,
    whisper: 'none',
    room: null,
    muted: false,
    peer: null,
    detached: false,
  };
}

/** The answer's fields (one update with whatever else the transition records). */
function recordAnswer({ context, event }: { context: CallContext; event: CallEvent }): Partial<CallContext> {
  return {
    answeredAt: at(event),
    sipOutcome: { status: 200, reason: null },
    // An outbound leg's dialog comes with its 2xx (an inbound leg's with the ACK: `sip.dialog`).
    dialog: event.type === 'sip.answered' && event.dialog ? event.dialog : context.dialog,
    finalResponse:
      event.type === 'sip.answered'
        ? { callId: event.dialog?.callId ?? null, headers: event.sipHeaders ?? {} }
        : (context.finalResponse ?? null),
  };
}

/** The domain events that say only which step the call reached. */
type StepType =
  | 'call.created'
  | 'call.initiated'
  | 'call.ringing'
  | 'call.answered'
  | 'call.confirmed'
  | 'call.whispered';

const emitStep = (type: StepType) =>
  emit<CallContext, CallEvent, undefined, CallEvent, CallEmitted>(({ context, event }) => ({
    type,
    call: context,
    at: at(event),
  }));

export function callSetup(effects: CallEffects) {
  return setup({
    types: {
      context: {} as CallContext,
      events: {} as CallEvent,
      input: {} as CallInput,
      emitted: {} as CallEmitted,
      tags: {} as CallStatus,
    },
    guards: {
      isInbound: ({ context }) => context.direction === 'inbound',
      isChild: ({ context }) => context.direction === 'outbound-dial',
      isBusy: ({ event }) => BUSY.has(failedStatus(event)),
      isNoAnswer: ({ event }) => NO_ANSWER.has(failedStatus(event)),
      isBusyReject: ({ event }) => event.type === 'app.reject' && event.reason === 'busy',
      hasApp: ({ context }) => context.app !== null,
      isWhispering: ({ context }) => context.whisper === 'running',
      isUnconfirmed: ({ context }) => !context.confirmed,
      isReferPending: ({ context }) => (context.refer ?? null) !== null,
    },
    delays: {
      RING_TIMEOUT: ({ context }) => Math.max(0, (context.ringDeadline ?? Date.now()) - Date.now()),
      /** An inbound leg whose endpoint is not ready by then fails (500). */
      ENDPOINT_TIMEOUT: ENDPOINT_TIMEOUT_MS,
      /** The transferor is released with a final NOTIFY by the end of the REFER's subscription. */
      REFER_OUTCOME_TIMEOUT: REFER_SUBSCRIPTION_SECONDS * 1000,
    },
    actors: {
      admit: fromPromise<void, { accountSid: string; sid: string }>(({ input, signal }) =>
        effects.admit(input.accountSid, input.sid, signal),
      ),
      place: fromPromise<PlaceCall, CallContext>(({ input, signal }) => effects.place(input, signal)),
      sendDigits: fromPromise<void, { sid: string; digits: string }>(({ input, signal }) =>
        effects.sendDigits(input.sid, input.digits, signal),
      ),
      planRefer: fromPromise<ReferPlan, { call: CallContext; refer: ReferRequest }>(({ input, signal }) =>
        effects.planRefer(input.call, input.refer, signal),
      ),
    },
    actions: {
      // ---- the call's state --------------------------------------------------------------------
      armRingDeadline: assign({ ringDeadline: ({ context }) => Date.now() + context.timeoutSeconds * 1000 }),
      recordAdmitted: assign({ admitted: true }),
      recordPlaced: assign({
        localSdp: ({ event }) => (event as unknown as { output: PlaceCall }).output.sdp ?? null,
      }),
      recordAnswer: assign(recordAnswer),
      /** An inbound leg's endpoint is ready: its SDP is the answer, and the call is answered now. */
      recordEndpointAnswer: assign(({ context, event }) => ({
        ...recordAnswer({ context, event }),
        localSdp: event.type === 'media.endpointReady' ? event.sdp : context.localSdp,
        remoteSdp: null,
      })),
      recordDialog: assign({
        dialog: ({ context, event }) => (event.type === 'sip.dialog' ? event.dialog : context.dialog),
        confirmed: true,
      }),
      recordEnd: assign(({ event }, cause: EndCause) => ({ endedAt: at(event), endCause: cause })),
      recordFailure: assign({
        sipOutcome: ({ event }) => {
          if (event.type === 'sip.failed')
            return { status: event.status, reason: `${event.status} ${event.reason}`.trim() };
          const e = (event as { error?: unknown }).error;
          return e instanceof PlacementError
            ? { status: e.status, reason: e.message, local: true, notified: e.notified }
            : { status: 500, reason: 'internal error', local: true };
        },
        finalResponse: ({ context, event }) =>
          event.type === 'sip.failed'
            ? { callId: event.sipCallId ?? null, headers: event.sipHeaders ?? {} }
            : (context.finalResponse ?? null),
      }),
      recordCallerCancel: assign({
        sipOutcome: ({ context }) => context.sipOutcome ?? { status: 487, reason: null },
      }),
      recordBridge: assign({ peer: ({ event }) => (event.type === 'app.bridged' ? event.peer : null) }),
      recordRoom: assign({ room: ({ event }) => (event.type === 'media.room' ? event.room : null) }),
      recordMute: assign({ muted: ({ event }) => event.type === 'http.mute' && event.muted }),
      recordEndCallback: assign({
        endCallback: ({ context, event }) =>
          event.type === 'http.endCallback' ? event.callback : context.endCallback,
      }),
      recordDetached: assign({ detached: true }),
      clearPeer: assign({ peer: null }),
      recordApp: assign(({ context }, app: CallApp) => ({
        app,
        whisper: app.kind === 'markup' && app.whisper ? ('running' as const) : context.whisper,
      })),
      /** A REST call runs its Url once answered. */
      recordRestApp: assign({
        app: ({ context }) =>
          context.markup && context.direction === 'outbound-api'
            ? { kind: 'markup' as const, ...context.markup, answered: true }
            : context.app,
      }),
      recordRejected: assign((_, status: number) => ({ sipOutcome: { status, reason: null } })),
      recordNoMedia: assign(({ event }) => ({
        sipOutcome: {
          status: isNoPort(event) ? 503 : 500,
          reason: 'no media endpoint',
          notified: isNoPort(event),
        },
      })),
      recordAppDone: assign({
        app: null,
        whisper: ({ context }) => (context.whisper === 'running' ? 'done' : context.whisper),
      }),
      recordRefer: assign({ refer: ({ event }) => (event.type === 'sip.refer' ? event.refer : null) }),
      clearRefer: assign({ refer: null }),
      recordTransfer: assign({
        transfer: ({ context, event }) => (event.type === 'app.transfer' ? event.transfer : context.transfer),
        app: ({ context, event }) =>
          event.type === 'app.transfer'
            ? { kind: 'markup' as const, ...event.app, answered: true }
            : context.app,
        whisper: 'none',
      }),
      recordDialed: assign({
        dialed: ({ context, event }) => (event.type === 'app.dialed' ? event.leg : (context.dialed ?? null)),
      }),
      recordReferOut: assign({ referOut: { response: null, notify: null, final: false } }),
      recordReferResult: assign({
        referOut: ({ context, event }) => {
          const o = context.referOut ?? { response: null, notify: null, final: false };
          if (event.type !== 'sip.referResult') return o;
          return { ...o, response: event.status, final: event.status < 200 || event.status >= 300 };
        },
      }),
      recordReferNotify: assign({
        referOut: ({ context, event }) => {
          const o = context.referOut ?? { response: null, notify: null, final: false };
          if (event.type !== 'sip.referNotify') return o;
          const notify = event.sipfrag ?? o.notify;
          return { ...o, notify, final: o.final || event.terminated || (notify ?? 0) >= 200 };
        },
      }),
      countProgress: assign({
        progressSent: ({ context }, event: ProgressEvent) =>
          context.progressSent + (context.progress?.events.includes(event) ? 1 : 0),
      }),

      // ---- effects -----------------------------------------------------------------------------
      ring: ({ context }) => effects.ring(context.sid),
      createEndpoint: ({ context }) => effects.createEndpoint(context.sid, context.remoteSdp),
      answer: ({ context }) => {
        if (context.localSdp) effects.answer(context.sid, context.localSdp);
      },
      reject: ({ context }, status: number) => effects.reject(context.sid, status),
      rejectNoMedia: ({ context, event }) => {
        if (isNoPort(event)) {
          // The caller may try again shortly: 503 with Retry-After, not a final refusal.
          effects.reject(context.sid, 503, 'No Media Capacity', NO_MEDIA_RETRY_AFTER_SECONDS);
          effects.notifyNoMedia(context, false);
        } else effects.reject(context.sid, 500);
      },
      cancel: ({ context }) => effects.cancel(context.sid),
      hangUp: ({ context }) => effects.hangUp(context.sid),
      invite: ({ context, event }) =>
        effects.invite(context.sid, (event as unknown as { output: PlaceCall }).output),
      endDialog: ({ context }) => {
        if (context.dialog) effects.endDialog(context.dialog);
      },
      applyRemoteSdp: ({ context, event }) => {
        if (event.type === 'sip.answered' && event.sdp) effects.applyRemoteSdp(context.sid, event.sdp);
      },
      setMuted: ({ context }) => effects.setMuted(context.sid, context.muted),
      unbridgePeer: ({ context, event }) => {
        if (event.type === 'http.move' && event.unbridge && context.peer)
          effects.unbridge(context.sid, context.peer);
      },
      /** Runs `context.app` (set by `recordApp`, or given at creation for an inbound call). */
      runApp: ({ context, self }) => {
        if (context.app) effects.startApp(context, context.app, (e) => self.send(e));
      },
      redirectApp: ({ context, event }) => {
        if (event.type === 'http.redirect' || event.type === 'http.move')
          effects.redirectApp(context.sid, event.to);
      },
      wrapUp: ({ context }) => {
        effects.releaseMedia(context.sid);
        if (context.app) effects.endApp(context.sid);
        if (context.admitted) effects.releaseAdmission(context.accountSid, context.sid);
      },

      // ---- transfer (REFER) ---------------------------------------------------------------------
      refuseRefer: ({ context, event }, p: { status: number; reason: string }) => {
        if (event.type === 'sip.refer') effects.answerRefer(context.sid, event.refer.id, p.status, p.reason);
      },
      refusePlannedRefer: ({ context, event }) => {
        const e = (event as { error?: unknown }).error;
        const r = e instanceof ReferRefusal ? e : new ReferRefusal(500, 'SIP Refer problem during execution');
        if (context.refer) effects.answerRefer(context.sid, context.refer.id, r.status, r.reason);
      },
      /** 202, then NOTIFY 100 Trying, then the transferee runs the ReferUrl (RFC 3515 §2.4.4-5). */
      acceptRefer: ({ context, event }) => {
        const refer = context.refer;
        if (!refer) return;
        const plan = (event as unknown as { output: ReferPlan }).output;
        effects.answerRefer(context.sid, refer.id, 202);
        effects.notifyRefer(context.sid, refer.id, 100, false);
        effects.unbridge(context.sid, plan.transferee);
        effects.transfer(
          plan.transferee,
          {
            referTarget: refer.target ?? '',
            transferor: refer.transferor ?? '',
            transferee: refer.transferee ?? '',
            by: context.sid,
          },
          plan.app,
        );
      },
      sendRefer: ({ context, event }) => {
        if (event.type === 'app.refer') effects.refer(context.sid, event.referTo);
      },
      notifyReferOutcome: ({ context, event }, status?: number) => {
        const final = event.type === 'app.referOutcome' ? event.status : (status ?? 500);
        if (context.refer) effects.notifyRefer(context.sid, context.refer.id, final, true);
      },

      // ---- domain events -----------------------------------------------------------------------
      emitCreated: emitStep('call.created'),
      emitInitiated: emitStep('call.initiated'),
      emitRinging: emitStep('call.ringing'),
      emitAnswered: emitStep('call.answered'),
      emitConfirmed: emitStep('call.confirmed'),
      emitBridged: emit(({ context, event }) => ({
        type: 'call.bridged' as const,
        call: context,
        peer: context.peer,
        at: at(event),
      })),
      emitMuted: emit(({ context, event }) => ({
        type: 'call.muted' as const,
        call: context,
        muted: context.muted,
        at: at(event),
      })),
      emitWhispered: emitStep('call.whispered'),
      emitEnded: emit(({ context }, params: { status: CallStatus }) => {
        const end = context.endedAt ?? Date.now();
        return {
          type: 'call.ended' as const,
          call: context,
          status: params.status,
          cause: context.endCause ?? 'local-hangup',
          sipStatus: context.sipOutcome?.status ?? null,
          at: end,
          duration: answeredSeconds(context.answeredAt, end),
        };
      }),
    },
  });
}
