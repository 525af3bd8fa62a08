/**
 * The call actor (spec §Call, §Call state table): one root actor per leg that owns the call. Its
 * context is the call's state; SIP, media, REST and app inputs are events; waits are invoked actors;
 * side effects are the `CallEffects` given to `createCallMachine` by the composition root; and it
 * announces every change as a domain event (`call.*`, call.types.ts) that callbacks, the CDR,
 * snapshots and metrics subscribe to.
 *
 *   outbound-api: queued ─(admit)─▶ dialing.placing ─(place: INVITE sent)─▶ dialing.sent
 *   outbound-dial:                  dialing.placing …
 *   dialing ──sip.ringing──▶ ringing ──sip.answered──▶ inProgress ──sip.bye / app.hangup /
 *      │  ╲───sip.answered──────────────────────────▶ inProgress    http.complete / media.lost──▶ completed
 *      ├─ sip.failed or not placed: 486/600/603 ▶ busy · 408/480/487, ring timeout ▶ noAnswer · else ▶ failed
 *      └─ http.cancel / http.complete ▶ canceled
 *   inbound: incoming ──app.answer──▶ answering ─(endpoint ready: 200 sent)─▶ inProgress
 *            incoming: app.reject ▶ busy | noAnswer; sip.cancel, http.cancel/complete, app.hangup ▶ canceled
 *   inProgress: idle ⇄ sendingDigits (app.sendDigits; the invoked actor sends them)
 *   call.restored (a snapshot restored on a node that holds none of the call's live handles):
 *            queued ▶ queued again (admission, then dial); unanswered with a SIP transaction ▶ failed;
 *            inProgress ▶ completed with a BYE in the persisted dialog (its media lived on the dead node)
 *
 * Terminal states are final: exactly one `call.ended` per call whatever races (a BYE, a REST hangup
 * and a timeout arriving together: the first one wins, the others find no transition). The REST
 * status comes from the state's tag via `statusOf`.
 */
import { assign, emit, fromPromise, type SnapshotFrom, setup } from 'xstate';
import type { PlaceCall } from '../../sip/port.js';
import { type CallStatus, CallStatus as S } from '../../store/call-store.js';
import type { CallApp, CallContext, CallEmitted, CallEvent, CallInput, EndCause } from './call.types.js';
import { type CallEffects, PlacementError } from './call-effects.js';
import { ProgressEvent } from './status-callbacks.js';

export const DEFAULT_RING_TIMEOUT_SECONDS = 60;

/** SIP final statuses (RFC 3261 §21) that mean the callee is busy or did not answer. */
const BUSY = new Set([486, 600, 603]);
const NO_ANSWER = new Set([408, 480, 487]);

const at = (e: CallEvent | { type: string }) => ('at' in e && typeof e.at === 'number' ? e.at : Date.now());
const failedStatus = (e: { type: string; status?: number; error?: unknown }): number =>
  e.type === 'sip.failed' ? (e.status ?? 500) : e.error instanceof PlacementError ? e.error.status : 500;
const endedAction = (status: CallStatus) => [{ type: 'emitEnded', params: { status } }, 'wrapUp'] as const;

/** A final answer to our INVITE, or a leg we could not place: how it ends the leg. */
const ON_FAILED = [
  {
    guard: 'isBusy',
    target: '#call.busy',
    actions: ['recordFailure', { type: 'recordEnd', params: 'sip-failure' }],
  },
  {
    guard: 'isNoAnswer',
    target: '#call.noAnswer',
    actions: ['recordFailure', { type: 'recordEnd', params: 'no-answer' }],
  },
  { target: '#call.failed', actions: ['recordFailure', { type: 'recordEnd', params: 'sip-failure' }] },
] as const;
const ON_ANSWERED = {
  target: '#call.inProgress',
  actions: [
    'recordAnswer',
    'applyRemoteSdp',
    'emitAnswered',
    { type: 'countProgress', params: ProgressEvent.Answered },
    'recordRestApp',
    'runApp',
  ],
} as const;
/** Ends an unanswered outbound leg from our side (REST, timeout, lost media). */
const cancelOut = (cause: EndCause) =>
  ({ target: '#call.canceled', actions: [{ type: 'recordEnd', params: cause }, 'cancel'] }) as const;
const rejectIn = (status: number, cause: EndCause, target = '#call.canceled') =>
  ({
    target,
    actions: [
      { type: 'recordEnd', params: cause },
      { type: 'recordRejected', params: status },
      { type: 'reject', params: status },
    ],
  }) as const;
const hangUp = (cause: EndCause) =>
  ({ target: '#call.completed', actions: [{ type: 'recordEnd', params: cause }, 'hangUp'] }) as const;
const lost = (target: string) => ({ target, actions: [{ type: 'recordEnd', params: 'node-lost' }] }) as const;

export function createCallMachine(effects: CallEffects) {
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
    },
    delays: {
      RING_TIMEOUT: ({ context }) => Math.max(0, (context.ringDeadline ?? Date.now()) - Date.now()),
    },
    actors: {
      admit: fromPromise<void, { accountSid: string; sid: string }>(({ input, signal }) =>
        effects.admit(input.accountSid, input.sid, signal),
      ),
      place: fromPromise<PlaceCall, CallContext>(({ input, signal }) => effects.place(input, signal)),
      createEndpoint: fromPromise<string, { sid: string; remoteSdp: string | null }>(({ input, signal }) =>
        effects.createEndpoint(input.sid, input.remoteSdp, signal),
      ),
      sendDigits: fromPromise<void, { sid: string; digits: string }>(({ input, signal }) =>
        effects.sendDigits(input.sid, input.digits, signal),
      ),
    },
    actions: {
      // ---- the call's state --------------------------------------------------------------------
      armRingDeadline: assign({ ringDeadline: ({ context }) => Date.now() + context.timeoutSeconds * 1000 }),
      recordAdmitted: assign({ admitted: true }),
      recordPlaced: assign({
        localSdp: ({ event }) => (event as unknown as { output: PlaceCall }).output.sdp ?? null,
      }),
      recordEndpoint: assign({
        localSdp: ({ event }) => (event as unknown as { output: string }).output,
        remoteSdp: null,
      }),
      recordAnswer: assign({
        answeredAt: ({ event }) => at(event),
        sipOutcome: { status: 200, reason: null },
        // An outbound leg's dialog comes with its 2xx (an inbound leg's with the ACK: `sip.dialog`).
        dialog: ({ context, event }) =>
          event.type === 'sip.answered' && event.dialog ? event.dialog : context.dialog,
      }),
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
      countProgress: assign({
        progressSent: ({ context }, event: ProgressEvent) =>
          context.progressSent + (context.progress?.events.includes(event) ? 1 : 0),
      }),

      // ---- effects -----------------------------------------------------------------------------
      ring: ({ context }) => effects.ring(context.sid),
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

      // ---- domain events -----------------------------------------------------------------------
      emitCreated: emit(({ context, event }) => ({
        type: 'call.created' as const,
        call: context,
        at: at(event),
      })),
      emitInitiated: emit(({ context, event }) => ({
        type: 'call.initiated' as const,
        call: context,
        at: at(event),
      })),
      emitRinging: emit(({ context, event }) => ({
        type: 'call.ringing' as const,
        call: context,
        at: at(event),
      })),
      emitAnswered: emit(({ context, event }) => ({
        type: 'call.answered' as const,
        call: context,
        at: at(event),
      })),
      emitConfirmed: emit(({ context, event }) => ({
        type: 'call.confirmed' as const,
        call: context,
        at: at(event),
      })),
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
      emitWhispered: emit(({ context, event }) => ({
        type: 'call.whispered' as const,
        call: context,
        at: at(event),
      })),
      emitEnded: emit(({ context }, params: { status: CallStatus }) => {
        const end = context.endedAt ?? Date.now();
        return {
          type: 'call.ended' as const,
          call: context,
          status: params.status,
          cause: context.endCause ?? 'local-hangup',
          sipStatus: context.sipOutcome?.status ?? null,
          at: end,
          duration:
            context.answeredAt === null ? 0 : Math.max(0, Math.round((end - context.answeredAt) / 1000)),
        };
      }),
    },
  }).createMachine({
    id: 'call',
    context: ({ input }) => initialContext(input),
    on: {
      'sip.dialog': [
        { guard: 'isUnconfirmed', actions: ['recordDialog', 'emitConfirmed'] },
        { actions: 'recordDialog' },
      ],
      'media.room': { actions: 'recordRoom' },
      'http.mute': { actions: ['recordMute', 'setMuted', 'emitMuted'] },
      'http.endCallback': { actions: 'recordEndCallback' },
      'http.redirect': { guard: 'hasApp', actions: 'redirectApp' },
      'http.move': { guard: 'hasApp', actions: ['unbridgePeer', 'clearPeer', 'redirectApp'] },
      'app.bridged': { actions: ['recordBridge', 'emitBridged'] },
      'app.detach': { actions: 'recordDetached' },
    },
    initial: 'start',
    states: {
      start: {
        always: [
          {
            guard: 'isInbound',
            target: 'incoming',
            actions: ['emitCreated', 'ring', 'emitRinging', 'runApp'],
          },
          { guard: 'isChild', target: 'dialing', actions: ['emitCreated', 'armRingDeadline'] },
          { target: 'queued', actions: 'emitCreated' },
        ],
      },
      queued: {
        tags: S.Queued,
        invoke: {
          src: 'admit',
          input: ({ context }) => ({ accountSid: context.accountSid, sid: context.sid }),
          onDone: { target: 'dialing', actions: ['recordAdmitted', 'armRingDeadline'] },
        },
        on: {
          'call.restored': { target: 'queued', reenter: true },
          'http.cancel': { target: 'canceled', actions: { type: 'recordEnd', params: 'api' } },
          'http.complete': { target: 'canceled', actions: { type: 'recordEnd', params: 'api' } },
        },
      },
      // INVITE being prepared or sent, no ringing yet: still "queued" to the REST API.
      dialing: {
        tags: S.Queued,
        initial: 'placing',
        after: {
          RING_TIMEOUT: {
            target: 'noAnswer',
            actions: [{ type: 'recordEnd', params: 'no-answer' }, 'cancel'],
          },
        },
        states: {
          placing: {
            invoke: {
              src: 'place',
              input: ({ context }) => context,
              onDone: {
                target: 'sent',
                actions: [
                  'recordPlaced',
                  'invite',
                  'emitInitiated',
                  { type: 'countProgress', params: ProgressEvent.Initiated },
                ],
              },
              onError: ON_FAILED,
            },
          },
          sent: {},
        },
        on: {
          'call.restored': lost('failed'),
          'sip.ringing': {
            target: 'ringing',
            actions: ['emitRinging', { type: 'countProgress', params: ProgressEvent.Ringing }],
          },
          'sip.answered': ON_ANSWERED,
          'sip.failed': ON_FAILED,
          'http.cancel': cancelOut('api'),
          'http.complete': cancelOut('api'),
          'media.lost': cancelOut('media-lost'),
        },
      },
      ringing: {
        tags: S.Ringing,
        after: {
          RING_TIMEOUT: {
            target: 'noAnswer',
            actions: [{ type: 'recordEnd', params: 'no-answer' }, 'cancel'],
          },
        },
        on: {
          'call.restored': lost('failed'),
          'sip.answered': ON_ANSWERED,
          'sip.failed': ON_FAILED,
          'http.cancel': cancelOut('api'),
          'http.complete': cancelOut('api'),
          'media.lost': cancelOut('media-lost'),
        },
      },
      incoming: {
        tags: S.Ringing,
        on: {
          'call.restored': lost('failed'),
          // The caller gave up (CANCEL; the SIP layer answers 487).
          'sip.cancel': {
            target: 'canceled',
            actions: [{ type: 'recordEnd', params: 'canceled-by-caller' }, 'recordCallerCancel'],
          },
          'app.answer': 'answering',
          'app.reject': [
            { guard: 'isBusyReject', ...rejectIn(486, 'rejected', '#call.busy') },
            rejectIn(603, 'rejected', '#call.noAnswer'),
          ],
          'app.hangup': rejectIn(603, 'local-hangup'),
          'app.done': rejectIn(603, 'local-hangup'),
          'http.cancel': rejectIn(487, 'api'),
          'http.complete': rejectIn(487, 'api'),
          'media.lost': rejectIn(487, 'media-lost'),
        },
      },
      answering: {
        tags: S.Ringing,
        invoke: {
          src: 'createEndpoint',
          input: ({ context }) => ({ sid: context.sid, remoteSdp: context.remoteSdp }),
          onDone: {
            target: 'inProgress',
            actions: ['recordEndpoint', 'recordAnswer', 'answer', 'emitAnswered'],
          },
          onError: {
            target: 'failed',
            actions: [{ type: 'recordEnd', params: 'media-lost' }, 'recordNoMedia', 'rejectNoMedia'],
          },
        },
        on: {
          'call.restored': lost('failed'),
          'sip.cancel': {
            target: 'canceled',
            actions: [{ type: 'recordEnd', params: 'canceled-by-caller' }, 'recordCallerCancel'],
          },
          'app.reject': [
            { guard: 'isBusyReject', ...rejectIn(486, 'rejected', '#call.busy') },
            rejectIn(603, 'rejected', '#call.noAnswer'),
          ],
          'app.hangup': rejectIn(603, 'local-hangup'),
          'app.done': rejectIn(603, 'local-hangup'),
          'http.cancel': rejectIn(487, 'api'),
          'http.complete': rejectIn(487, 'api'),
        },
      },
      inProgress: {
        tags: S.InProgress,
        initial: 'idle',
        states: {
          idle: { on: { 'app.sendDigits': 'sendingDigits' } },
          sendingDigits: {
            invoke: {
              src: 'sendDigits',
              input: ({ context, event }) => ({
                sid: context.sid,
                digits: event.type === 'app.sendDigits' ? event.digits : '',
              }),
              onDone: 'idle',
              onError: 'idle',
            },
            on: { 'app.stopDigits': 'idle' },
          },
        },
        on: {
          'call.restored': {
            target: 'completed',
            actions: [{ type: 'recordEnd', params: 'node-lost' }, 'endDialog'],
          },
          'sip.bye': { target: 'completed', actions: { type: 'recordEnd', params: 'remote-hangup' } },
          'app.hangup': hangUp('local-hangup'),
          'app.done': [
            { guard: 'isWhispering', actions: ['recordAppDone', 'emitWhispered'] },
            hangUp('local-hangup'),
          ],
          'http.complete': hangUp('api'),
          'media.lost': hangUp('media-lost'),
          'app.whisper': {
            actions: [
              {
                type: 'recordApp',
                params: ({ event }) => ({
                  kind: 'markup' as const,
                  url: event.url,
                  method: event.method,
                  fallbackUrl: null,
                  fallbackMethod: 'POST' as const,
                  answered: true,
                  whisper: true,
                }),
              },
              'runApp',
            ],
          },
          // No app runs (its document ended with the call up): the redirect starts one.
          'http.redirect': [
            { guard: 'hasApp', actions: 'redirectApp' },
            {
              actions: [
                {
                  type: 'recordApp',
                  params: ({ event }) => ({ kind: 'markup' as const, ...event.to, answered: true }),
                },
                'runApp',
              ],
            },
          ],
          'http.move': [
            { guard: 'hasApp', actions: ['unbridgePeer', 'clearPeer', 'redirectApp'] },
            {
              actions: [
                'unbridgePeer',
                'clearPeer',
                {
                  type: 'recordApp',
                  params: ({ event }) => ({ kind: 'markup' as const, ...event.to, answered: true }),
                },
                'runApp',
              ],
            },
          ],
          // Spec: Status=canceled does not affect an answered call (no transition: `can` is false).
        },
      },
      completed: { tags: S.Completed, type: 'final', entry: endedAction(S.Completed) },
      busy: { tags: S.Busy, type: 'final', entry: endedAction(S.Busy) },
      failed: { tags: S.Failed, type: 'final', entry: endedAction(S.Failed) },
      noAnswer: { tags: S.NoAnswer, type: 'final', entry: endedAction(S.NoAnswer) },
      canceled: { tags: S.Canceled, type: 'final', entry: endedAction(S.Canceled) },
    },
  });
}

const isNoPort = (event: unknown) =>
  (event as { error?: { reason?: unknown } } | undefined)?.error?.reason === 'no-port';

/** Retry-After of a 503 for an exhausted RTP port range, seconds. */
const NO_MEDIA_RETRY_AFTER_SECONDS = 30;

function initialContext(input: CallInput): CallContext {
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

export type CallMachine = ReturnType<typeof createCallMachine>;
export type CallSnapshot = SnapshotFrom<CallMachine>;

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
export function statusOf(snapshot: Pick<CallSnapshot, 'hasTag' | 'value'>): CallStatus {
  for (const s of ORDER) if (snapshot.hasTag(s)) return s;
  throw new Error(`call actor in an untagged state: ${JSON.stringify(snapshot.value)}`);
}
