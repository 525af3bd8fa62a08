/**
 * SMS message actor (spec §SMS status (outbound)). One root actor per message.
 *
 *   boot ─┬─ inbound ─────────────▶ received (invokes handleInbound: SmsUrl markup) ─▶ handled
 *         ├─ recorded sent ───────▶ sent            (restored to take a late receipt; straight to
 *         │                                          its final state if its outcomes decide it)
 *         ├─ link down (SMPP) ────▶ queued ──link.up──▶ sendingCarrier
 *         ├─ client: recipient ───▶ sendingClient (invokes deliverToClient)
 *         └─────────────────────────────────────────▶ sendingCarrier (emits the `sms.submit` command)
 *   sendingCarrier ── smpp.submitted ─▶ sent ─┬─ receipt: every segment DELIVRD ─────▶ delivered
 *                                             ├─ receipt: a segment UNDELIV/EXPIRED ──▶ undelivered
 *                                             └─ receipt: a segment REJECTD/DELETED… ─▶ failed
 *   sendingClient ─── done ─▶ sentToClient (SIP MESSAGE: final, no receipts follow)
 *   sending… ── smpp.submitFailed / error, requeue (link closing) ─▶ queued (recorded; resumed on
 *            │                                                      the next start)
 *            └─ smpp.submitFailed / error ─▶ failed
 *
 * The carrier submit is a port command (emitted `sms.submit`, outcome back as one event) rather than an
 * invoked actor: a child actor per message cost as much as a third of this machine's runtime. The
 * SIP MESSAGE delivery stays invoked (it is cancelled through its signal when the actor stops).
 * Both sending states carry the `sending` tag. The states are flat and a receipt decides the
 * message in the transition that takes it (no eventless step after each event): every state level
 * and microstep costs the XState runtime allocations on each of the node's messages.
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

type Receipt = Extract<SmsEvent, { type: 'smpp.receipt' }>;

/** A segment's outcome, once receipt `e` is taken when there is one (a pending receipt changes none). */
const outcomeWith = (c: SmsContext, e: Receipt | undefined, id: string): SegmentOutcome | undefined =>
  e && id === e.messageId && e.outcome !== 'pending' ? e.outcome : c.outcomes[id];

/** Some segment has this outcome (once receipt `e` is taken); no allocation. */
const hasOutcome = (c: SmsContext, outcome: SegmentOutcome, e?: Receipt): boolean =>
  c.providerIds.some((id) => outcomeWith(c, e, id) === outcome);

/** Every segment is delivered (once receipt `e` is taken). */
const isAllDelivered = (c: SmsContext, e?: Receipt): boolean =>
  c.providerIds.length > 0 && c.providerIds.every((id) => outcomeWith(c, e, id) === 'delivered');

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
    actions: status('emitStatus', [S.Sending], S.Queued),
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
    isRecordedSentFailed: ({ context }) => context.recorded === S.Sent && hasOutcome(context, 'failed'),
    isRecordedSentUndelivered: ({ context }) =>
      context.recorded === S.Sent && hasOutcome(context, 'undelivered'),
    isRecordedSentDelivered: ({ context }) => context.recorded === S.Sent && isAllDelivered(context),
    receiptFails: ({ context, event }) =>
      event.type === 'smpp.receipt' && hasOutcome(context, 'failed', event),
    receiptUndelivers: ({ context, event }) =>
      event.type === 'smpp.receipt' && hasOutcome(context, 'undelivered', event),
    receiptDelivers: ({ context, event }) => event.type === 'smpp.receipt' && isAllDelivered(context, event),
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
    /** The submit command (its outcome comes back as an event: no invoked actor per message). */
    emitSubmit: emit(({ context }) => ({ type: 'sms.submit' as const, input: sendInput(context) })),
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
        // A restored message whose recorded outcomes already decide it (the node stopped between
        // recording a segment's outcome and the message's status).
        {
          guard: 'isRecordedSentFailed',
          target: 'failed',
          actions: status('emitStatus', [S.Sent], S.Failed),
        },
        {
          guard: 'isRecordedSentUndelivered',
          target: 'undelivered',
          actions: status('emitStatus', [S.Sent], S.Undelivered),
        },
        {
          guard: 'isRecordedSentDelivered',
          target: 'delivered',
          actions: status('emitStatus', [S.Sent], S.Delivered),
        },
        { guard: 'isRecordedSent', target: 'sent' },
        { guard: 'isRecordedQueued', target: 'queued' },
        { guard: 'isClientMessage', target: 'sendingClient' },
        { target: 'sendingCarrier' },
      ],
    },
    queued: {
      tags: [S.Queued],
      on: {
        'link.up': [
          {
            guard: 'isClientMessage',
            target: 'sendingClient',
            actions: status('emitStatus', [S.Queued], S.Sending),
          },
          { target: 'sendingCarrier', actions: status('emitStatus', [S.Queued], S.Sending) },
        ],
      },
    },
    sendingCarrier: {
      tags: [S.Sending],
      entry: 'emitSubmit',
      on: {
        'smpp.submitted': { target: 'sent', actions: ['recordProviderIds', 'emitSent'] },
        'smpp.submitFailed': ON_SEND_ERROR,
      },
    },
    sendingClient: {
      tags: [S.Sending],
      invoke: {
        src: 'deliverToClient',
        input: ({ context }) => sendInput(context),
        onDone: { target: 'sentToClient', actions: 'emitSent' },
        onError: ON_SEND_ERROR,
      },
    },
    sent: {
      tags: [S.Sent],
      on: {
        'smpp.receipt': [
          {
            guard: 'receiptFails',
            target: 'failed',
            actions: ['recordReceipt', status('emitStatus', [S.Sent], S.Failed)],
          },
          {
            guard: 'receiptUndelivers',
            target: 'undelivered',
            actions: ['recordReceipt', status('emitStatus', [S.Sent], S.Undelivered)],
          },
          // Final with nothing to record: the last segment's outcome decides no later event, and a
          // delivered receipt carries no error code (one assign less on nearly every message).
          {
            guard: 'receiptDelivers',
            target: 'delivered',
            actions: status('emitStatus', [S.Sent], S.Delivered),
          },
          { actions: 'recordReceipt' },
        ],
      },
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
