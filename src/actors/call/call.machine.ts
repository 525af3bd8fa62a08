/**
 * Call leg actor (spec §Call, §Call state table). One root actor per leg.
 *
 *   queued ──call.dial──▶ dialing ──sip.ringing──▶ ringing ──sip.answered──▶ inProgress ──▶ completed
 *   (outbound)              │  ╲                    │                        (sip.bye, app.hangup,
 *                           │   ╲─sip.answered──────┼──▶ inProgress           http.complete)
 *                           ├─ sip.failed 486/600/603 ──▶ busy
 *                           ├─ sip.failed 408/480/487, ring timeout ──▶ noAnswer
 *                           ├─ sip.failed other ──▶ failed
 *                           └─ http.cancel / http.complete ──▶ canceled
 *   inbound: starts in ringing; app.answer ▶ inProgress; app.reject ▶ busy | noAnswer;
 *            sip.cancel (caller gave up) / http.cancel ▶ canceled; app.hangup before answer ▶ canceled
 *
 * Terminal states are final: exactly one `call.ended` per call whatever races (a BYE, a REST hangup
 * and a timeout arriving together: the first one wins, the others find no transition).
 * Effects are emitted on transitions (never on entry), so `call.restored` can re-enter a state to
 * re-arm its ring timer from the absolute deadline without re-sending anything.
 * The REST status comes from the state's tag via `statusOf`.
 */
import { assign, emit, type SnapshotFrom, setup } from 'xstate';
import { type CallStatus, CallStatus as S } from '../../store/call-store.js';
import type { CallContext, CallEmitted, CallEvent, CallInput } from './call.types.js';

export const DEFAULT_RING_TIMEOUT_SECONDS = 60;

/** SIP final statuses (RFC 3261 §21) that mean the callee is busy or did not answer. */
const BUSY = new Set([486, 600, 603]);
const NO_ANSWER = new Set([408, 480, 487]);

const at = (e: CallEvent) => ('at' in e ? e.at : Date.now());

/** Shared by `dialing` and `ringing`: how a final answer to our INVITE ends or continues the leg. */
const ON_SIP_FAILED = [
  { guard: 'isBusy', target: 'busy', actions: ['recordEnd', 'recordSipStatus'] },
  { guard: 'isNoAnswer', target: 'noAnswer', actions: ['recordEnd', 'recordSipStatus'] },
  { target: 'failed', actions: ['recordEnd', 'recordSipStatus'] },
] as const;
const ON_SIP_ANSWERED = {
  target: 'inProgress',
  actions: ['recordAnswer', { type: 'emitStatus', params: { status: S.InProgress } }],
} as const;

export const callMachine = setup({
  types: {
    context: {} as CallContext,
    events: {} as CallEvent,
    input: {} as CallInput,
    emitted: {} as CallEmitted,
    tags: {} as CallStatus,
  },
  guards: {
    isInbound: ({ context }) => context.direction === 'inbound',
    isBusy: ({ event }) => event.type === 'sip.failed' && BUSY.has(event.status),
    isNoAnswer: ({ event }) => event.type === 'sip.failed' && NO_ANSWER.has(event.status),
    isBusyReject: ({ event }) => event.type === 'app.reject' && event.reason === 'busy',
  },
  delays: {
    RING_TIMEOUT: ({ context }) => Math.max(0, (context.ringDeadline ?? Date.now()) - Date.now()),
  },
  actions: {
    armRingDeadline: assign({
      ringDeadline: ({ context, event }) => at(event) + context.timeoutSeconds * 1000,
    }),
    recordAnswer: assign({
      answeredAt: ({ event }) => at(event),
      // An outbound leg's dialog comes with its 2xx (an inbound leg's with the ACK: `sip.dialog`).
      dialog: ({ context, event }) =>
        event.type === 'sip.answered' && event.dialog ? event.dialog : context.dialog,
    }),
    recordDialog: assign({
      dialog: ({ context, event }) => (event.type === 'sip.dialog' ? event.dialog : context.dialog),
    }),
    recordEnd: assign({ endedAt: ({ event }) => at(event) }),
    recordSipStatus: assign({
      sipStatus: ({ event }) => (event.type === 'sip.failed' ? event.status : null),
    }),
    placeCall: emit(({ context }) => ({ type: 'sip.placeCall' as const, callSid: context.sid })),
    cancelInvite: emit(({ context }) => ({ type: 'sip.cancel' as const, callSid: context.sid })),
    hangUp: emit(({ context }) => ({ type: 'sip.hangUp' as const, callSid: context.sid })),
    answer: emit(({ context }) => ({ type: 'sip.answer' as const, callSid: context.sid })),
    rejectBusy: emit(({ context }) => ({ type: 'sip.reject' as const, callSid: context.sid, status: 486 })),
    rejectDeclined: emit(({ context }) => ({
      type: 'sip.reject' as const,
      callSid: context.sid,
      status: 603,
    })),
    rejectTerminated: emit(({ context }) => ({
      type: 'sip.reject' as const,
      callSid: context.sid,
      status: 487,
    })),
    emitStatus: emit(({ context, event }, params: { status: CallStatus }) => ({
      type: 'call.status' as const,
      callSid: context.sid,
      status: params.status,
      at: at(event),
    })),
    emitEnded: emit(({ context }, params: { status: CallStatus }) => {
      const end = context.endedAt ?? Date.now();
      return {
        type: 'call.ended' as const,
        callSid: context.sid,
        status: params.status,
        at: end,
        duration:
          context.answeredAt === null ? 0 : Math.max(0, Math.round((end - context.answeredAt) / 1000)),
      };
    }),
  },
}).createMachine({
  id: 'call',
  context: ({ input }) => ({
    sid: input.sid,
    accountSid: input.accountSid,
    direction: input.direction,
    from: input.from,
    to: input.to,
    parentCallSid: input.parentCallSid ?? null,
    timeoutSeconds: input.timeoutSeconds ?? DEFAULT_RING_TIMEOUT_SECONDS,
    ringDeadline: null,
    createdAt: input.createdAt,
    answeredAt: null,
    endedAt: null,
    sipStatus: null,
    dialog: null,
  }),
  // The SIP dialog, once there is one: persisted with the snapshot so that another node can end the
  // call (BYE) if this one dies (docs/calls.md, recovery).
  on: { 'sip.dialog': { actions: 'recordDialog' } },
  initial: 'start',
  states: {
    start: {
      always: [{ guard: 'isInbound', target: 'ringing' }, { target: 'queued' }],
    },
    queued: {
      tags: S.Queued,
      on: {
        'call.dial': { target: 'dialing', actions: ['armRingDeadline', 'placeCall'] },
        'http.cancel': { target: 'canceled', actions: 'recordEnd' },
        'http.complete': { target: 'canceled', actions: 'recordEnd' },
      },
    },
    // INVITE sent, no ringing yet: still "queued" to the REST API.
    dialing: {
      tags: S.Queued,
      after: { RING_TIMEOUT: { target: 'noAnswer', actions: ['recordEnd', 'cancelInvite'] } },
      on: {
        'call.restored': { target: 'dialing', reenter: true },
        'sip.ringing': { target: 'ringing', actions: { type: 'emitStatus', params: { status: S.Ringing } } },
        'sip.answered': ON_SIP_ANSWERED,
        'sip.failed': ON_SIP_FAILED,
        'http.cancel': { target: 'canceled', actions: ['recordEnd', 'cancelInvite'] },
        'http.complete': { target: 'canceled', actions: ['recordEnd', 'cancelInvite'] },
      },
    },
    ringing: {
      tags: S.Ringing,
      after: {
        RING_TIMEOUT: {
          guard: ({ context }) => context.direction !== 'inbound',
          target: 'noAnswer',
          actions: ['recordEnd', 'cancelInvite'],
        },
      },
      on: {
        'call.restored': { target: 'ringing', reenter: true },
        'sip.answered': ON_SIP_ANSWERED,
        'sip.failed': ON_SIP_FAILED,
        // Inbound: the caller gave up (CANCEL; the SIP layer answers 487) or the app decides.
        'sip.cancel': { target: 'canceled', actions: 'recordEnd' },
        'app.answer': {
          guard: 'isInbound',
          target: 'inProgress',
          actions: ['recordAnswer', 'answer', { type: 'emitStatus', params: { status: S.InProgress } }],
        },
        'app.reject': [
          { guard: 'isBusyReject', target: 'busy', actions: ['recordEnd', 'rejectBusy'] },
          { target: 'noAnswer', actions: ['recordEnd', 'rejectDeclined'] },
        ],
        'app.hangup': { guard: 'isInbound', target: 'canceled', actions: ['recordEnd', 'rejectDeclined'] },
        'http.cancel': [
          { guard: 'isInbound', target: 'canceled', actions: ['recordEnd', 'rejectTerminated'] },
          { target: 'canceled', actions: ['recordEnd', 'cancelInvite'] },
        ],
        'http.complete': [
          { guard: 'isInbound', target: 'canceled', actions: ['recordEnd', 'rejectTerminated'] },
          { target: 'canceled', actions: ['recordEnd', 'cancelInvite'] },
        ],
      },
    },
    inProgress: {
      tags: S.InProgress,
      on: {
        'sip.bye': { target: 'completed', actions: 'recordEnd' },
        'app.hangup': { target: 'completed', actions: ['recordEnd', 'hangUp'] },
        'http.complete': { target: 'completed', actions: ['recordEnd', 'hangUp'] },
        // Spec: Status=canceled does not affect an answered call (no transition: `can` is false).
      },
    },
    completed: {
      tags: S.Completed,
      type: 'final',
      entry: { type: 'emitEnded', params: { status: S.Completed } },
    },
    busy: { tags: S.Busy, type: 'final', entry: { type: 'emitEnded', params: { status: S.Busy } } },
    failed: { tags: S.Failed, type: 'final', entry: { type: 'emitEnded', params: { status: S.Failed } } },
    noAnswer: {
      tags: S.NoAnswer,
      type: 'final',
      entry: { type: 'emitEnded', params: { status: S.NoAnswer } },
    },
    canceled: {
      tags: S.Canceled,
      type: 'final',
      entry: { type: 'emitEnded', params: { status: S.Canceled } },
    },
  },
});

export type CallSnapshot = SnapshotFrom<typeof callMachine>;

const ORDER: readonly CallStatus[] = [
  S.Completed,
  S.Busy,
  S.Failed,
  S.NoAnswer,
  S.Canceled,
  S.InProgress,
  S.Ringing,
  S.Queued,
];

/** The one mapping from actor state to the REST-visible status. */
export function statusOf(snapshot: CallSnapshot): CallStatus {
  for (const s of ORDER) if (snapshot.hasTag(s)) return s;
  throw new Error(`call actor in an untagged state: ${JSON.stringify(snapshot.value)}`);
}
