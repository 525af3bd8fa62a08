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
 *   inbound: incoming ──app.answer──▶ answering ─media.endpointReady (200 sent)─▶ inProgress
 *            answering: media.endpointFailed, media.lost or ENDPOINT_TIMEOUT ▶ failed (503 no port, else 500)
 *            incoming: app.reject ▶ busy | noAnswer; sip.cancel, http.cancel/complete, app.hangup ▶ canceled
 *   inProgress: idle ⇄ sendingDigits (app.sendDigits; the invoked actor sends them)
 *   inProgress: sip.refer (blind transfer, RFC 5589 §6.1) ▶ referring (the peer and the dialled
 *            number's ReferUrl looked up; refused: 404 ▶ idle) ▶ 202, NOTIFY 100, the peer runs the
 *            ReferUrl (`app.transfer`) ▶ transferring ─app.referOutcome (its new leg's final status)
 *            or REFER_OUTCOME_TIMEOUT: final NOTIFY, BYE──▶ completed. A REFER elsewhere: 404.
 *   inProgress: app.refer (`<Refer>`) sends REFER; sip.referResult / sip.referNotify are recorded
 *            in `referOut` until final (the interpreter's CallControl waits on it).
 *   call.restored (a snapshot restored on a node that holds none of the call's live handles):
 *            queued ▶ queued again (admission, then dial); unanswered with a SIP transaction ▶ failed;
 *            inProgress ▶ completed with a BYE in the persisted dialog (its media lived on the dead node)
 *
 * Terminal states are final: exactly one `call.ended` per call whatever races (a BYE, a REST hangup
 * and a timeout arriving together: the first one wins, the others find no transition). The REST
 * status comes from the state's tag via `statusOf`.
 */
import type { SnapshotFrom } from 'xstate';
import { type CallStatus, CallStatus as S } from '../../store/call-store.js';
import { callSetup, initialContext } from './call.setup.js';
import type { EndCause } from './call.types.js';
import type { CallEffects } from './call-effects.js';
import { ProgressEvent } from './status-callbacks.js';

export { DEFAULT_RING_TIMEOUT_SECONDS } from './call.setup.js';

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
/** An inbound leg whose endpoint could not be made (failed, lost or late): 503 or 500 to the caller. */
const NO_MEDIA = {
  target: '#call.failed',
  actions: [{ type: 'recordEnd', params: 'media-lost' }, 'recordNoMedia', 'rejectNoMedia'],
} as const;
/** An inbound leg not answered yet (ringing, or its endpoint being made): how it ends. */
const UNANSWERED_INBOUND = {
  'call.restored': lost('failed'),
  // The caller gave up (CANCEL; the SIP layer answers 487).
  'sip.cancel': {
    target: '#call.canceled',
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
} as const;

export function createCallMachine(effects: CallEffects) {
  return callSetup(effects).createMachine({
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
      'app.dialed': { actions: 'recordDialed' },
      'sip.refer': {
        actions: {
          type: 'refuseRefer',
          params: { status: 404, reason: 'SIP Refer pre-conditions failed: call not in progress' },
        },
      },
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
          { guard: 'isChild', target: 'dialing', actions: 'emitCreated' },
          { target: 'queued', actions: 'emitCreated' },
        ],
      },
      queued: {
        tags: S.Queued,
        invoke: {
          src: 'admit',
          input: ({ context }) => ({ accountSid: context.origin.accountSid, sid: context.origin.sid }),
          onDone: { target: 'dialing', actions: 'recordAdmitted' },
        },
        on: {
          'call.restored': { target: 'queued', reenter: true },
          'http.cancel': { target: 'canceled', actions: { type: 'recordEnd', params: 'api' } },
          'http.complete': { target: 'canceled', actions: { type: 'recordEnd', params: 'api' } },
        },
      },
      // INVITE being prepared or sent, no ringing yet: still "queued" to the REST API. Timeout counts
      // from the INVITE (placing has its own bounds: the endpoint's, the route lookups').
      dialing: {
        tags: S.Queued,
        initial: 'placing',
        states: {
          placing: {
            invoke: {
              src: 'place',
              input: ({ context }) => context,
              onDone: {
                target: 'sent',
                actions: [
                  'recordPlaced',
                  'armRingDeadline',
                  'invite',
                  'emitInitiated',
                  { type: 'countProgress', params: ProgressEvent.Initiated },
                ],
              },
              onError: ON_FAILED,
            },
          },
          sent: {
            after: {
              RING_TIMEOUT: {
                target: '#call.noAnswer',
                actions: [{ type: 'recordEnd', params: 'no-answer' }, 'cancel'],
              },
            },
          },
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
          ...UNANSWERED_INBOUND,
          'app.answer': 'answering',
          'media.lost': rejectIn(487, 'media-lost'),
        },
      },
      // The endpoint's outcome is an event of the media engine, like the SIP outcomes of a leg.
      answering: {
        tags: S.Ringing,
        entry: 'createEndpoint',
        after: { ENDPOINT_TIMEOUT: NO_MEDIA },
        on: {
          ...UNANSWERED_INBOUND,
          'media.endpointReady': {
            target: 'inProgress',
            actions: ['recordEndpointAnswer', 'answer', 'emitAnswered'],
          },
          'media.endpointFailed': NO_MEDIA,
          'media.lost': NO_MEDIA,
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
                sid: context.origin.sid,
                digits: event.type === 'app.sendDigits' ? event.digits : '',
              }),
              onDone: 'idle',
              onError: 'idle',
            },
            on: { 'app.stopDigits': 'idle' },
          },
          referring: {
            invoke: {
              src: 'planRefer',
              input: ({ context }) => ({ call: context, refer: context.refer! }),
              onDone: { target: 'transferring', actions: ['acceptRefer', 'recordDetached', 'clearPeer'] },
              onError: { target: 'idle', actions: ['refusePlannedRefer', 'clearRefer'] },
            },
          },
          transferring: {
            after: {
              REFER_OUTCOME_TIMEOUT: {
                target: '#call.completed',
                actions: [
                  { type: 'notifyReferOutcome', params: 408 },
                  { type: 'recordEnd', params: 'local-hangup' },
                  'hangUp',
                ],
              },
            },
            on: {
              'app.referOutcome': {
                target: '#call.completed',
                actions: ['notifyReferOutcome', { type: 'recordEnd', params: 'local-hangup' }, 'hangUp'],
              },
            },
          },
        },
        on: {
          'sip.refer': [
            {
              guard: 'isReferPending',
              actions: {
                type: 'refuseRefer',
                params: { status: 491, reason: 'A transfer of this call is in progress' },
              },
            },
            { target: '.referring', actions: 'recordRefer' },
          ],
          // `<Refer>`: this leg asks its far end to transfer itself (RFC 3515, as the referrer).
          'app.refer': { actions: ['recordReferOut', 'sendRefer'] },
          'sip.referResult': { actions: 'recordReferResult' },
          'sip.referNotify': { actions: 'recordReferNotify' },
          // The leg it was bridged with accepted a REFER: this leg runs the ReferUrl.
          'app.transfer': { actions: ['clearPeer', 'recordDetached', 'recordTransfer', 'runApp'] },
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
