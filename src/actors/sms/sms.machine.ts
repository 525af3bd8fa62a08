/**
 * SMS message actor (spec §SMS status (outbound)). One root actor per message.
 *
 *   boot ─┬─ inbound ─────────────▶ received (invokes handleInbound: SmsUrl markup) ─▶ handled
 *         ├─ recorded sent ───────▶ sent            (restored to take a late receipt)
 *         ├─ link down (SMPP) ────▶ queued ──link.up──▶ sending
 *         └─────────────────────────────────────────▶ sending (invokes submitSms / deliverToClient)
 *   sending ── done ─▶ sent ─┬─ all segments DELIVRD ──────▶ delivered
 *           │                ├─ a segment UNDELIV/EXPIRED ─▶ undelivered
 *           │                ├─ a segment REJECTD/DELETED… ─▶ failed
 *           │                └─ SIP MESSAGE (client) ──────▶ sentToClient (no receipts follow)
 *           ├─ error, requeue (link closing) ─▶ queued (recorded; resumed on the next start)
 *           └─ error ─▶ failed
 *
 * Every status change is emitted once as `sms.status` with the statuses it may come from; the
 * service applies it to the store conditionally, so a duplicate or late event changes nothing.
 * The REST status comes from the state's tag (`statusOf`).
 */
import { assign, emit, fromPromise, type SnapshotFrom, setup } from 'xstate';
import { SmsStatus as S, type SmsStatus } from '../../store/sms-store.js';
import type {
  SegmentOutcome,
  SendFailure,
  SendInput,
  SendOutput,
  SmsContext,
  SmsEmitted,
  SmsEvent,
  SmsInput,
} from './sms.types.js';

/** Placeholder logic: the service provides the real implementations (`smsMachine.provide`). */
const notProvided = <O, I>(name: string) =>
  fromPromise<O, I>(async () => {
    throw new Error(`${name} is not provided`);
  });

const isSendFailure = (e: unknown): e is SendFailure =>
  typeof e === 'object' && e !== null && 'requeue' in e && 'errorCode' in e;

/** Some segment has this receipt outcome (checked after every event in `sent`: no allocation). */
const hasOutcome = (c: SmsContext, outcome: SegmentOutcome): boolean =>
  c.providerIds.some((id) => c.outcomes[id] === outcome);

const status = (type: 'emitStatus', from: readonly SmsStatus[], to: SmsStatus) =>
  ({ type, params: { from, to } }) as const;

/**
 * Shared by both ways of sending: a closing link requeues (recorded as queued, so the next start
 * resumes it without flagging a possible duplicate), anything else fails the message.
 */
const ON_SEND_ERROR = [
  {
    guard: 'isRequeue',
    target: '#sms.queued',
    actions: [
      status('emitStatus', [S.Sending], S.Queued),
      { type: 'recordRecorded', params: { status: S.Queued } },
    ],
  },
  {
    target: '#sms.failed',
    actions: ['recordSendError', status('emitStatus', [S.Queued, S.Sending], S.Failed)],
  },
] as const;

/** The SMS message machine (state table in the file header; spec §SMS status). */
export const smsMachine = setup({
  types: {
    context: {} as SmsContext,
    events: {} as SmsEvent,
    input: {} as SmsInput,
    emitted: {} as SmsEmitted,
    tags: {} as SmsStatus,
  },
  actors: {
    /** Submits over the carrier link; resolves with provider ids, rejects with a SendFailure. */
    submitSms: notProvided<SendOutput, SendInput>('submitSms'),
    /** Sends a SIP MESSAGE to a registered client (`client:` recipients). */
    deliverToClient: notProvided<SendOutput, SendInput>('deliverToClient'),
    /** Inbound: fetch the number's SMS markup and run it (`<Sms>`, `<Redirect>`, `<Email>`). */
    handleInbound: notProvided<void, { sid: string }>('handleInbound'),
  },
  guards: {
    isInbound: ({ context }) => context.direction === 'incoming',
    isRecordedSent: ({ context }) => context.recorded === S.Sent,
    isRecordedQueued: ({ context }) => context.recorded === S.Queued,
    isClientMessage: ({ context }) => context.channel === 'sip',
    isRequeue: ({ event }) => ('error' in event && isSendFailure(event.error) ? event.error.requeue : false),
    hasFailedSegment: ({ context }) => hasOutcome(context, 'failed'),
    hasUndeliveredSegment: ({ context }) => hasOutcome(context, 'undelivered'),
    isAllDelivered: ({ context }) =>
      context.providerIds.length > 0 &&
      context.providerIds.every((id) => context.outcomes[id] === 'delivered'),
  },
  actions: {
    emitStatus: emit(({ context }, params: { from: readonly SmsStatus[]; to: SmsStatus }) => ({
      type: 'sms.status' as const,
      sid: context.sid,
      from: params.from,
      to: params.to,
      errorCode: context.errorCode,
      at: Date.now(),
    })),
    emitSent: emit(({ context, event }) => {
      const out = (event as unknown as { output: SendOutput }).output;
      return {
        type: 'sms.status' as const,
        sid: context.sid,
        from: [S.Queued, S.Sending],
        to: S.Sent,
        errorCode: null,
        providerIds: out.providerIds,
        possibleDuplicate: out.possibleDuplicate,
        at: Date.now(),
      };
    }),
    recordRecorded: assign({ recorded: (_, params: { status: SmsStatus }) => params.status }),
    recordProviderIds: assign({
      providerIds: ({ event }) => (event as unknown as { output: SendOutput }).output.providerIds,
    }),
    recordSendError: assign({
      errorCode: ({ event }) => {
        const err = 'error' in event ? event.error : undefined;
        return isSendFailure(err) ? err.errorCode : null;
      },
    }),
    recordReceipt: assign({
      outcomes: ({ context, event }) =>
        event.type === 'smpp.receipt' &&
        event.outcome !== 'pending' &&
        context.providerIds.includes(event.messageId)
          ? { ...context.outcomes, [event.messageId]: event.outcome }
          : context.outcomes,
      errorCode: ({ context, event }) =>
        event.type === 'smpp.receipt' && event.outcome !== 'pending' && event.outcome !== 'delivered'
          ? (event.errorCode ?? context.errorCode)
          : context.errorCode,
    }),
  },
}).createMachine({
  id: 'sms',
  context: ({ input }) => ({
    sid: input.sid,
    accountSid: input.accountSid,
    from: input.from,
    to: input.to,
    body: input.body,
    channel: input.channel,
    direction: input.direction,
    recorded: input.status,
    destinationNetworkId: input.destinationNetworkId,
    providerIds: input.providerIds ?? [],
    outcomes: input.outcomes ?? {},
    errorCode: null,
  }),
  initial: 'boot',
  states: {
    boot: {
      always: [
        { guard: 'isInbound', target: 'received' },
        { guard: 'isRecordedSent', target: 'sent' },
        { guard: 'isRecordedQueued', target: 'queued' },
        // Straight to the way of sending, not through `sending.route`: one microstep less per message.
        { guard: 'isClientMessage', target: 'sending.client' },
        { target: 'sending.carrier' },
      ],
    },
    queued: {
      tags: [S.Queued],
      on: {
        'link.up': {
          target: 'sending',
          actions: [
            status('emitStatus', [S.Queued], S.Sending),
            { type: 'recordRecorded', params: { status: S.Sending } },
          ],
        },
      },
    },
    sending: {
      tags: [S.Sending],
      initial: 'route',
      states: {
        route: { always: [{ guard: 'isClientMessage', target: 'client' }, { target: 'carrier' }] },
        carrier: {
          invoke: {
            src: 'submitSms',
            input: ({ context }) => sendInput(context),
            onDone: {
              target: '#sms.sent',
              actions: [
                'recordProviderIds',
                'emitSent',
                { type: 'recordRecorded', params: { status: S.Sent } },
              ],
            },
            onError: ON_SEND_ERROR,
          },
        },
        client: {
          invoke: {
            src: 'deliverToClient',
            input: ({ context }) => sendInput(context),
            onDone: { target: '#sms.sentToClient', actions: ['emitSent'] },
            onError: ON_SEND_ERROR,
          },
        },
      },
    },
    sent: {
      tags: [S.Sent],
      on: { 'smpp.receipt': { actions: 'recordReceipt' } },
      always: [
        { guard: 'hasFailedSegment', target: 'failed', actions: status('emitStatus', [S.Sent], S.Failed) },
        {
          guard: 'hasUndeliveredSegment',
          target: 'undelivered',
          actions: status('emitStatus', [S.Sent], S.Undelivered),
        },
        {
          guard: 'isAllDelivered',
          target: 'delivered',
          actions: status('emitStatus', [S.Sent], S.Delivered),
        },
      ],
    },
    sentToClient: { tags: [S.Sent], type: 'final' },
    delivered: { tags: [S.Delivered], type: 'final' },
    undelivered: { tags: [S.Undelivered], type: 'final' },
    failed: { tags: [S.Failed], type: 'final' },
    received: {
      tags: [S.Received],
      invoke: {
        src: 'handleInbound',
        input: ({ context }) => ({ sid: context.sid }),
        onDone: 'handled',
        onError: 'handled',
      },
    },
    handled: { tags: [S.Received], type: 'final' },
  },
});

function sendInput(c: SmsContext): SendInput {
  return {
    sid: c.sid,
    accountSid: c.accountSid,
    from: c.from,
    to: c.to,
    body: c.body,
    destinationNetworkId: c.destinationNetworkId,
  };
}

/** Snapshot of an SMS actor. */
export type SmsSnapshot = SnapshotFrom<typeof smsMachine>;

const TAG_ORDER: readonly SmsStatus[] = [
  S.Queued,
  S.Sending,
  S.Sent,
  S.Delivered,
  S.Undelivered,
  S.Failed,
  S.Received,
];

/** The REST-visible status of a snapshot (from the state's tag). */
export function statusOf(snapshot: SmsSnapshot): SmsStatus {
  return TAG_ORDER.find((t) => snapshot.hasTag(t)) ?? S.Sending;
}
