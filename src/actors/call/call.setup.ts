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
  CallSip,
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
    origin: {
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
      markup: input.markup ?? null,
      progress: input.progress ?? null,
      numberCallback: input.numberCallback ?? null,
      credentials: input.credentials ?? null,
    },
    sip: { outcome: null, dialog: null, confirmed: false, finalResponse: null },
    media: { remoteSdp: input.remoteSdp ?? null, localSdp: null, room: null, muted: false },
    ringDeadline: null,
    answeredAt: null,
    endedAt: null,
    endCause: null,
    endCallback: null,
    progressSent: 0,
    admitted: false,
    app: input.app ?? null,
    whisper: 'none',
    peer: null,
    detached: false,
  };
}

/** The answer's fields (one update with whatever else the transition records). */
function answeredSip(context: CallContext, event: CallEvent): CallSip {
  return {
    outcome: { status: 200, reason: null },
    // An outbound leg's dialog comes with its 2xx (an inbound leg's with the ACK: `sip.dialog`).
    dialog: event.type === 'sip.answered' && event.dialog ? event.dialog : context.sip.dialog,
    confirmed: context.sip.confirmed,
    finalResponse:
      event.type === 'sip.answered'
        ? { callId: event.dialog?.callId ?? null, headers: event.sipHeaders ?? {} }
        : context.sip.finalResponse,
  };
}

/** The context with one more SIP fact. */
const withSip = (context: CallContext, sip: Partial<CallSip>) => ({ sip: { ...context.sip, ...sip } });

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
      isInbound: ({ context }) => context.origin.direction === 'inbound',
      isChild: ({ context }) => context.origin.direction === 'outbound-dial',
      isBusy: ({ event }) => BUSY.has(failedStatus(event)),
      isNoAnswer: ({ event }) => NO_ANSWER.has(failedStatus(event)),
      isBusyReject: ({ event }) => event.type === 'app.reject' && event.reason === 'busy',
      hasApp: ({ context }) => context.app !== null,
      isWhispering: ({ context }) => context.whisper === 'running',
      isUnconfirmed: ({ context }) => !context.sip.confirmed,
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
      armRingDeadline: assign({
        ringDeadline: ({ context }) => Date.now() + context.origin.timeoutSeconds * 1000,
      }),
      recordAdmitted: assign({ admitted: true }),
      recordPlaced: assign(({ context, event }) => ({
        media: {
          ...context.media,
          localSdp: (event as unknown as { output: PlaceCall }).output.sdp ?? null,
        },
      })),
      recordAnswer: assign(({ context, event }) => ({
        answeredAt: at(event),
        sip: answeredSip(context, event),
      })),
      /** An inbound leg's endpoint is ready: its SDP is the answer, and the call is answered now. */
      recordEndpointAnswer: assign(({ context, event }) => ({
        answeredAt: at(event),
        sip: answeredSip(context, event),
        media: {
          ...context.media,
          localSdp: event.type === 'media.endpointReady' ? event.sdp : context.media.localSdp,
          remoteSdp: null,
        },
      })),
      recordDialog: assign(({ context, event }) =>
        withSip(context, {
          dialog: event.type === 'sip.dialog' ? event.dialog : context.sip.dialog,
          confirmed: true,
        }),
      ),
      recordEnd: assign(({ event }, cause: EndCause) => ({ endedAt: at(event), endCause: cause })),
      recordFailure: assign(({ context, event }) => {
        if (event.type === 'sip.failed')
          return withSip(context, {
            outcome: { status: event.status, reason: `${event.status} ${event.reason}`.trim() },
            finalResponse: { callId: event.sipCallId ?? null, headers: event.sipHeaders ?? {} },
          });
        const e = (event as { error?: unknown }).error;
        return withSip(context, {
          outcome:
            e instanceof PlacementError
              ? { status: e.status, reason: e.message, local: true, notified: e.notified }
              : { status: 500, reason: 'internal error', local: true },
        });
      }),
      recordCallerCancel: assign(({ context }) =>
        withSip(context, { outcome: context.sip.outcome ?? { status: 487, reason: null } }),
      ),
      recordBridge: assign({ peer: ({ event }) => (event.type === 'app.bridged' ? event.peer : null) }),
      recordRoom: assign(({ context, event }) => ({
        media: { ...context.media, room: event.type === 'media.room' ? event.room : null },
      })),
      recordMute: assign(({ context, event }) => ({
        media: { ...context.media, muted: event.type === 'http.mute' && event.muted },
      })),
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
          context.origin.markup && context.origin.direction === 'outbound-api'
            ? { kind: 'markup' as const, ...context.origin.markup, answered: true }
            : context.app,
      }),
      recordRejected: assign(({ context }, status: number) =>
        withSip(context, { outcome: { status, reason: null } }),
      ),
      recordNoMedia: assign(({ context, event }) =>
        withSip(context, {
          outcome: {
            status: isNoPort(event) ? 503 : 500,
            reason: 'no media endpoint',
            notified: isNoPort(event),
          },
        }),
      ),
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
          context.progressSent + (context.origin.progress?.events.includes(event) ? 1 : 0),
      }),

      // ---- effects -----------------------------------------------------------------------------
      ring: ({ context }) => effects.ring(context.origin.sid),
      createEndpoint: ({ context }) => effects.createEndpoint(context.origin.sid, context.media.remoteSdp),
      answer: ({ context }) => {
        if (context.media.localSdp) effects.answer(context.origin.sid, context.media.localSdp);
      },
      reject: ({ context }, status: number) => effects.reject(context.origin.sid, status),
      rejectNoMedia: ({ context, event }) => {
        if (isNoPort(event)) {
          // The caller may try again shortly: 503 with Retry-After, not a final refusal.
          effects.reject(context.origin.sid, 503, 'No Media Capacity', NO_MEDIA_RETRY_AFTER_SECONDS);
          effects.notifyNoMedia(context, false);
        } else effects.reject(context.origin.sid, 500);
      },
      cancel: ({ context }) => effects.cancel(context.origin.sid),
      hangUp: ({ context }) => effects.hangUp(context.origin.sid),
      invite: ({ context, event }) =>
        effects.invite(context.origin.sid, (event as unknown as { output: PlaceCall }).output),
      endDialog: ({ context }) => {
        if (context.sip.dialog) effects.endDialog(context.sip.dialog);
      },
      applyRemoteSdp: ({ context, event }) => {
        if (event.type === 'sip.answered' && event.sdp) effects.applyRemoteSdp(context.origin.sid, event.sdp);
      },
      setMuted: ({ context }) => effects.setMuted(context.origin.sid, context.media.muted),
      unbridgePeer: ({ context, event }) => {
        if (event.type === 'http.move' && event.unbridge && context.peer)
          effects.unbridge(context.origin.sid, context.peer);
      },
      /** Runs `context.app` (set by `recordApp`, or given at creation for an inbound call). */
      runApp: ({ context, self }) => {
        if (context.app) effects.startApp(context, context.app, (e) => self.send(e));
      },
      redirectApp: ({ context, event }) => {
        if (event.type === 'http.redirect' || event.type === 'http.move')
          effects.redirectApp(context.origin.sid, event.to);
      },
      wrapUp: ({ context }) => {
        effects.releaseMedia(context.origin.sid);
        if (context.app) effects.endApp(context.origin.sid);
        if (context.admitted) effects.releaseAdmission(context.origin.accountSid, context.origin.sid);
      },

      // ---- transfer (REFER) ---------------------------------------------------------------------
      refuseRefer: ({ context, event }, p: { status: number; reason: string }) => {
        if (event.type === 'sip.refer')
          effects.answerRefer(context.origin.sid, event.refer.id, p.status, p.reason);
      },
      refusePlannedRefer: ({ context, event }) => {
        const e = (event as { error?: unknown }).error;
        const r = e instanceof ReferRefusal ? e : new ReferRefusal(500, 'SIP Refer problem during execution');
        if (context.refer) effects.answerRefer(context.origin.sid, context.refer.id, r.status, r.reason);
      },
      /** 202, then NOTIFY 100 Trying, then the transferee runs the ReferUrl (RFC 3515 §2.4.4-5). */
      acceptRefer: ({ context, event }) => {
        const refer = context.refer;
        if (!refer) return;
        const plan = (event as unknown as { output: ReferPlan }).output;
        effects.answerRefer(context.origin.sid, refer.id, 202);
        effects.notifyRefer(context.origin.sid, refer.id, 100, false);
        effects.unbridge(context.origin.sid, plan.transferee);
        effects.transfer(
          plan.transferee,
          {
            referTarget: refer.target ?? '',
            transferor: refer.transferor ?? '',
            transferee: refer.transferee ?? '',
            by: context.origin.sid,
          },
          plan.app,
        );
      },
      sendRefer: ({ context, event }) => {
        if (event.type === 'app.refer') effects.refer(context.origin.sid, event.referTo);
      },
      notifyReferOutcome: ({ context, event }, status?: number) => {
        const final = event.type === 'app.referOutcome' ? event.status : (status ?? 500);
        if (context.refer) effects.notifyRefer(context.origin.sid, context.refer.id, final, true);
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
        muted: context.media.muted,
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
          sipStatus: context.sip.outcome?.status ?? null,
          at: end,
          duration: answeredSeconds(context.answeredAt, end),
        };
      }),
    },
  });
}
