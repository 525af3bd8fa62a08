/**
 * The USSD session actor: Restcomm's UssdCall and UssdInterpreter as one machine.
 * One actor per session; SIP requests are its events, the markup fetch is an invoked actor, effects
 * are the `UssdEffects` given to `createUssdMachine` by the composition root, and every change is
 * announced as a domain event (`ussd.*`) that the call record and the live views follow.
 *
 *   pull (inbound INVITE): answering (180, 200) ──sip.confirmed──▶ fetching
 *   push (REST UssdPush):  fetching (the Url, before anything is sent)
 *   fetching ──markup──▶ delivering:
 *       pull + collect ▶ awaiting (INFO unstructuredSSRequest_Request)
 *       pull           ▶ completed (BYE carrying processUnstructuredSSRequest_Response)
 *       push, first    ▶ inviting (INVITE to the gateway: unstructuredSSRequest_Request for a
 *                        collect, else unstructuredSSNotify_Request) ──sip.answered──▶ awaiting
 *       push, later    ▶ awaiting (INFO with the same types)
 *   awaiting ──sip.info, a reply to a collect──▶ fetching (action, Digits = the reply)
 *            ──sip.info, anything else (the gateway's unstructuredSSNotify_Response) or idle──▶
 *            completed (BYE carrying <error-code value="1"/>)
 *   fetching without a usable document ▶ completed (BYE with the error code) or, for a push not yet
 *   sent, failed; inviting ──sip.failed──▶ failed; sip.bye / sip.ended anywhere ▶ completed (or
 *   canceled when never answered).
 *
 * Final states are final: one `ussd.ended` per session. A message that arrives after the end finds
 * no leg (481 from the SIP adapter), so repeated notify responses cannot restart anything.
 */
import { and, not } from 'xstate';
import { CallStatus as S } from '../../store/call-store.js';
import { initialContext, ussdSetup } from './ussd.setup.js';
import type { UssdEffects } from './ussd-effects.js';

const ended = (status: (typeof S)[keyof typeof S]) => ({
  entry: ['recordEnd', { type: 'emitEnded', params: { status } }] as const,
  type: 'final' as const,
});

const ON_GONE = [{ guard: 'wasAnswered', target: '#ussd.completed' }, { target: '#ussd.canceled' }] as const;

export function createUssdMachine(effects: UssdEffects) {
  return ussdSetup(effects).createMachine({
    id: 'ussd',
    context: ({ input }) => initialContext(input),
    initial: 'starting',
    on: { 'sip.bye': ON_GONE, 'sip.ended': ON_GONE },
    states: {
      starting: {
        always: [{ guard: 'isPull', target: 'answering' }, { target: 'fetching' }],
      },
      answering: {
        entry: 'answer',
        // The handset went away while the session was being routed: its leg sends nothing more.
        after: { IDLE: 'canceled' },
        on: { 'sip.confirmed': { target: 'fetching', actions: ['recordAnswer', 'emitAnswered'] } },
      },
      fetching: {
        invoke: {
          src: 'fetchReply',
          input: ({ context }) => context,
          onDone: [
            { guard: 'fetched', target: 'delivering', actions: 'recordReply' },
            { guard: 'isPull', target: 'completed', actions: 'byeClosing' },
            { guard: 'isInvited', target: 'completed', actions: 'byeClosing' },
            { target: 'failed' },
          ],
          onError: [
            { guard: 'isPull', target: 'completed', actions: 'byeClosing' },
            { guard: 'isInvited', target: 'completed', actions: 'byeClosing' },
            { target: 'failed' },
          ],
        },
      },
      delivering: {
        always: [
          {
            guard: and(['isPull', 'hasCollect']),
            target: 'awaiting',
            actions: ['sendRequest', 'emitMessage'],
          },
          { guard: 'isPull', target: 'completed', actions: ['byeWithReply', 'emitMessage'] },
          {
            guard: not('isInvited'),
            target: 'inviting',
            actions: ['recordInvited', 'invite', 'emitMessage'],
          },
          { target: 'awaiting', actions: ['sendRequest', 'emitMessage'] },
        ],
      },
      inviting: {
        after: { IDLE: { target: 'failed', actions: 'byeClosing' } },
        on: {
          'sip.answered': { target: 'awaiting', actions: ['recordAnswer', 'emitAnswered'] },
          'sip.failed': { target: 'failed', actions: 'recordFailure' },
        },
      },
      awaiting: {
        after: { IDLE: { target: 'completed', actions: 'byeClosing' } },
        on: {
          'sip.info': [
            { guard: 'isCollectReply', target: 'fetching', actions: 'recordCollectReply' },
            { target: 'completed', actions: 'byeClosing' },
          ],
        },
      },
      completed: ended(S.Completed),
      failed: ended(S.Failed),
      canceled: ended(S.Canceled),
    },
  });
}

export type UssdMachine = ReturnType<typeof createUssdMachine>;
