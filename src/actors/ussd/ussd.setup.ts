/**
 * The USSD machine's implementations (named, in a sibling file, so ussd.machine.ts reads like the
 * state table): guards, the idle delay, the fetch actor, and the actions — context updates, domain
 * events, and the effects the composition root gives as `UssdEffects`.
 */
import { assign, emit, fromPromise, setup } from 'xstate';
import type { CallStatus } from '../../store/call-store.js';
import { resolveUrl } from '../interpreter/params.js';
import type { UssdContext, UssdEmitted, UssdEvent, UssdFetch, UssdInput } from './ussd.types.js';
import { formatUssdData, parseUssdData, UssdMessageType } from './ussd-body.js';
import type { UssdEffects, UssdFetchOutcome } from './ussd-effects.js';

/** How long a session waits for the handset's (or the gateway's) next message. */
export const USSD_IDLE_TIMEOUT_MS = 120_000;

const at = (e: { type: string }) => ('at' in e && typeof e.at === 'number' ? e.at : Date.now());
const outcomeOf = (e: unknown): UssdFetchOutcome =>
  (e as { output?: UssdFetchOutcome }).output ?? { ok: false };
const infoOf = (e: UssdEvent) => (e.type === 'sip.info' ? parseUssdData(e.body) : null);

/** The body that ends a session without a message (Restcomm's: the gateway closes the dialogue). */
export const CLOSING_BODY = formatUssdData({ errorCode: '1' });

export function initialContext(input: UssdInput): UssdContext {
  return {
    ...input,
    pending: input.fetch,
    documentUrl: null,
    reply: null,
    invited: false,
    answeredAt: null,
    endedAt: null,
    sipStatus: null,
  };
}

/** The body of the current reply with the given message type. */
function replyBody(c: UssdContext, type: UssdMessageType): string {
  return formatUssdData({ language: c.reply?.language ?? 'en', text: c.reply?.text ?? '', type });
}

/** The message type of the current reply, sent in the INVITE or an INFO. */
function requestType(c: UssdContext): UssdMessageType {
  return c.reply?.collect ? UssdMessageType.RequestRequest : UssdMessageType.NotifyRequest;
}

export function ussdSetup(effects: UssdEffects) {
  return setup({
    types: {
      context: {} as UssdContext,
      events: {} as UssdEvent,
      input: {} as UssdInput,
      emitted: {} as UssdEmitted,
      tags: {} as CallStatus,
    },
    guards: {
      isPull: ({ context }) => context.direction === 'inbound',
      isInvited: ({ context }) => context.invited,
      hasCollect: ({ context }) => context.reply?.collect !== null && context.reply?.collect !== undefined,
      fetched: ({ event }) => outcomeOf(event).ok,
      /** The handset answered a menu: its text goes to the collect's action. */
      isCollectReply: ({ context, event }) => {
        const data = infoOf(event);
        return (
          data !== null &&
          data.type !== UssdMessageType.NotifyResponse &&
          data.text !== null &&
          context.reply?.collect !== null &&
          context.reply?.collect !== undefined
        );
      },
      wasAnswered: ({ context }) => context.answeredAt !== null,
    },
    delays: { IDLE: USSD_IDLE_TIMEOUT_MS },
    actors: {
      fetchReply: fromPromise<UssdFetchOutcome, UssdContext>(({ input, signal }) =>
        effects.fetchReply(input, input.pending, signal),
      ),
    },
    actions: {
      // ---- the session's state -----------------------------------------------------------------
      recordReply: assign(({ event }) => {
        const out = outcomeOf(event);
        return out.ok ? { reply: out.reply, documentUrl: out.documentUrl } : {};
      }),
      recordAnswer: assign({ answeredAt: ({ event }) => at(event) }),
      recordInvited: assign({ invited: true }),
      recordFailure: assign({ sipStatus: ({ event }) => (event.type === 'sip.failed' ? event.status : 500) }),
      recordEnd: assign({ endedAt: ({ event }) => at(event) }),
      /** The handset's reply to a menu becomes `Digits` of a request to the collect's action. */
      recordCollectReply: assign({
        pending: ({ context, event }): UssdFetch => {
          const collect = context.reply?.collect;
          const text = infoOf(event)?.text ?? '';
          const url =
            (collect?.action && resolveUrl(collect.action, context.documentUrl)) || context.documentUrl;
          return {
            url: url ?? context.pending.url,
            method: collect?.method ?? 'POST',
            fallback: null,
            params: [['Digits', text]],
          };
        },
      }),

      // ---- effects -----------------------------------------------------------------------------
      answer: ({ context }) => effects.answer(context.sid),
      invite: ({ context }) => effects.invite(context, replyBody(context, requestType(context))),
      sendRequest: ({ context }) => effects.sendInfo(context.sid, replyBody(context, requestType(context))),
      /** A pull's last message goes in the BYE. */
      byeWithReply: ({ context }) =>
        effects.hangUp(context.sid, replyBody(context, UssdMessageType.ProcessResponse)),
      byeClosing: ({ context }) => effects.hangUp(context.sid, CLOSING_BODY),

      // ---- domain events -----------------------------------------------------------------------
      emitAnswered: emit(({ context, event }) => ({
        type: 'ussd.answered' as const,
        session: context,
        at: at(event),
      })),
      emitMessage: emit(({ context, event }) => ({
        type: 'ussd.message' as const,
        session: context,
        at: at(event),
      })),
      emitEnded: emit(({ context, event }, params: { status: CallStatus }) => ({
        type: 'ussd.ended' as const,
        session: context,
        status: params.status,
        at: context.endedAt ?? at(event),
      })),
    },
  });
}
