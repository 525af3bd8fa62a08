/**
 * Markup interpreter actor (RCML/TwiML; docs/interpreter.md). One per call leg that runs
 * markup; it fetches a document, runs its verbs one at a time (each an invoked actor from
 * `verbs/<verb>.ts`), and ends the call when the document ends.
 *
 *   fetching ──ok──▶ (executing.next's choice, taken at once) ──end of document──▶ hungUp (final)
 *                                      (a whisper: ──▶ documentEnded (final), the call stays up)
 *      │                 │  ├─ media verb, call not answered ─▶ answering ─call.answered─▶ running.<verb>
 *      │                 │  │      (answering: the answer command on entry; call.answerFailed ─▶ ended)
 *      │                 │  ├─ Hangup (no actor: the outcome is the node's) ─▶ hungUp
 *      │                 │  ├─ Reject (no actor) ─▶ deciding
 *      │                 │  └─ otherwise ─────────────────────────────────▶ running.<verb>
 *      │                 │                    verb done: "next" ─▶ the same choice for the verb after
 *      │                 ▼                                     │ it, in one step (or on a failure)
 *      │            executing.deciding ◀───────────────────────┘ other outcomes
 *      │              ├─ next ─▶ executing.next (index + 1)
 *      │              ├─ fetch (action, Redirect) ─▶ fetching; chain cap reached ─▶ hungUp + Notification
 *      │              ├─ hangup ─▶ hungUp
 *      │              └─ reject ─▶ rejected (final) before answer; after answer ─▶ hungUp + Notification
 *      └──failed (after fallback; Notifications written) ──▶ hungUp
 *   any state: http.redirect ─▶ fetching (re-entered: the running verb or fetch is stopped by XState)
 *              call.ended    ─▶ ended (final; the running verb is stopped)
 *              call.ended in running.record ─▶ savingRecording (store it, request action with
 *                            Digits=hangup, response ignored) ─▶ ended
 *
 * Answer semantics (Restcomm): the call is answered just before its first media verb (Say, Play,
 * Pause, Gather, Record, Dial); Reject is only valid before that; the end of a document hangs up.
 * Context is plain data (program JSON, index, counters); the services are closed over by the actor
 * implementations, so the machine itself does no I/O beyond the call intents of its actions.
 */
import { assign, emit, setup, stateIn } from 'xstate';
import { type FetchMarkupOutput, fetchMarkupLogic } from './fetch-markup.js';
import {
  type Ahead,
  CALL_ENDED,
  currentVerb,
  emitFinishedWith,
  goToVerbAt,
  indexAt,
  inputOfVerb,
  loadFetched,
  programAt,
  recordOutcome,
  started,
  startVerbAt,
  type VerbSrc,
  verbAt,
  verbInput,
} from './interpreter.transitions.js';
import {
  DEFAULT_API_VERSION,
  type InterpreterContext,
  type InterpreterEmitted,
  InterpreterErrorCode,
  type InterpreterEvent,
  type InterpreterInput,
  type InterpreterOutput,
  MAX_REDIRECT_CHAIN,
  type VerbOutcome,
} from './interpreter.types.js';
import { resolveUrl } from './params.js';
import type { InterpreterServices } from './services.js';
import {
  dialVerb,
  emailVerb,
  gatherVerb,
  IMMEDIATE_VERBS,
  MEDIA_VERBS,
  playVerb,
  recordVerb,
  redirectVerb,
  referVerb,
  sayVerb,
  smsVerb,
} from './verbs/index.js';
import { pauseLogic } from './verbs/pause.js';
import { recordAfterHangupLogic } from './verbs/record.js';
import { errorText } from './verbs/support.js';

/** Builds the interpreter machine over the process's services (once, at the composition root). */
export function createInterpreterMachine(services: InterpreterServices) {
  // The common outcome, "next", goes straight on to the next verb (what `deciding` and then `next`
  // would do, two steps fewer). Moving on clears the outcome, so it is not recorded first: one
  // context copy fewer per verb.
  const verbDone = [
    {
      guard: {
        type: 'isNotNext',
        params: ({ event }: { event: { output: VerbOutcome } }) => event.output,
      },
      target: '#interpreter.executing.deciding',
      actions: [recordOutcome, 'emitVerbFinished'],
    },
    ...goToVerbAt(1, [emitFinishedWith] as const),
  ] as const;
  const verbFailed = goToVerbAt(1, ['notifyVerbError', 'emitVerbFinished'] as const);
  const verbState = <S extends VerbSrc>(src: S) =>
    ({ invoke: { src, input: verbInput, onDone: verbDone, onError: verbFailed } }) as const;
  /** A callback verb (a timer): its outcome comes as `verb.done` rather than as its output. */
  const callbackVerbState = <S extends VerbSrc>(src: S) =>
    ({ invoke: { src, input: verbInput, onError: verbFailed }, on: { 'verb.done': verbDone } }) as const;
  return setup({
    types: {
      context: {} as InterpreterContext,
      events: {} as InterpreterEvent,
      input: {} as InterpreterInput,
      output: {} as InterpreterOutput,
      emitted: {} as InterpreterEmitted,
    },
    actors: {
      fetchMarkup: fetchMarkupLogic(services),
      Say: sayVerb.logic(services),
      Play: playVerb.logic(services),
      Pause: pauseLogic(services),
      Gather: gatherVerb.logic(services),
      Record: recordVerb.logic(services),
      Dial: dialVerb.logic(services),
      Redirect: redirectVerb.logic(services),
      Sms: smsVerb.logic(services),
      Email: emailVerb.logic(services),
      Refer: referVerb.logic(services),
      recordAfterHangup: recordAfterHangupLogic(services),
    },
    delays: {
      /** How long a recording cut by a hangup may take to be finalised by the engine. */
      RECORDING_SAVE_TIMEOUT: 10_000,
    },
    guards: {
      isEndOfProgram: ({ context, event }, p: { ahead: Ahead }) =>
        indexAt(context, p.ahead) >= programAt(context, event, p.ahead).length,
      isEndOfWhisper: ({ context, event }, p: { ahead: Ahead }) =>
        context.whisper && indexAt(context, p.ahead) >= programAt(context, event, p.ahead).length,
      needsAnswer: ({ context, event }, p: { ahead: Ahead }) =>
        !context.answered && MEDIA_VERBS.has(verbAt(context, event, p.ahead) ?? ''),
      isVerb: ({ context, event }, p: { verb: VerbSrc | 'Hangup'; ahead: Ahead }) =>
        verbAt(context, event, p.ahead) === p.verb,
      isImmediate: ({ context, event }, p: { ahead: Ahead }) =>
        IMMEDIATE_VERBS.has(verbAt(context, event, p.ahead) ?? ''),
      isNotNext: (_, outcome: VerbOutcome) => outcome.kind !== 'next',
      fetchFailed: (_, output: FetchMarkupOutput) => !output.ok,
      outcomeIs: ({ context }, params: { kind: VerbOutcome['kind'] }) =>
        context.outcome?.kind === params.kind,
      isRejectBeforeAnswer: ({ context }) => context.outcome?.kind === 'reject' && !context.answered,
      isFetchOverChainCap: ({ context }) =>
        context.outcome?.kind === 'fetch' && context.chain >= MAX_REDIRECT_CHAIN,
    },
    actions: {
      loadProgram: assign((_, output: FetchMarkupOutput) =>
        output.ok
          ? { program: output.program, documentUrl: output.documentUrl, index: 0, outcome: null }
          : {},
      ),
      markAnswered: assign({ answered: true }),
      startVerb: assign(({ context }, p: { advance: boolean }) => started(context, p.advance)),
      /** `markAnswered` and `startVerb` in one update (the first media verb, once answered). */
      startAnsweredVerb: assign(({ context }) => ({ answered: true, ...started(context, false) })),
      /** `startVerb` and the outcome of a verb decided by its node (Hangup, Reject), in one update. */
      startImmediateVerb: assign(({ context }, p: { advance: boolean }) => {
        const fields = started(context, p.advance);
        const node = context.program[fields.index];
        const outcome = IMMEDIATE_VERBS.get(node?.verb ?? '')?.(
          inputOfVerb(context, fields.seq, fields.index),
        );
        return { ...fields, outcome: outcome ?? null };
      }),
      advance: assign(({ context }) => ({ index: context.index + 1, outcome: null })),
      recordOutcome: assign((_, outcome: VerbOutcome) => ({ outcome })),
      emitVerbStarted: emit(({ context }) => ({
        type: 'verb.started' as const,
        verb: currentVerb(context) ?? '',
        seq: context.seq,
      })),
      // The outcome given (a verb actor's output), else the one recorded (none: the verb failed).
      emitVerbFinished: emit(({ context }, params?: { outcome: VerbOutcome['kind'] }) => ({
        type: 'verb.finished' as const,
        verb: currentVerb(context) ?? '',
        seq: context.seq,
        outcome: params?.outcome ?? context.outcome?.kind ?? 'error',
      })),
      requestFetch: assign(({ context }) => {
        const o = context.outcome;
        if (o?.kind !== 'fetch') return {};
        return {
          request: { url: o.url, method: o.method, params: o.params, fallback: null },
          chain: context.chain + 1,
          outcome: null,
        };
      }),
      requestRestRedirect: assign(({ context, event }) => {
        if (event.type !== 'http.redirect') return {};
        const fallback = event.fallbackUrl ? resolveUrl(event.fallbackUrl, context.documentUrl) : null;
        return {
          request: {
            url: resolveUrl(event.url, context.documentUrl) ?? event.url,
            method: event.method ?? 'POST',
            params: [],
            fallback: fallback === null ? null : { url: fallback, method: event.fallbackMethod ?? 'POST' },
          },
          chain: 0,
          outcome: null,
        };
      }),
      answerCall: ({ context, self }) => services.call.answer(context.call.callSid, self),
      hangUpCall: ({ context }) => services.call.hangup(context.call.callSid),
      rejectCall: ({ context }) => {
        const o = context.outcome;
        services.call.reject(context.call.callSid, o?.kind === 'reject' ? o.reason : 'rejected');
      },
      notifyRedirectLimit: ({ context }) =>
        services.notify({
          accountSid: context.call.accountSid,
          callSid: context.call.callSid,
          errorCode: InterpreterErrorCode.RedirectLimit,
          log: 0,
          messageText: `${MAX_REDIRECT_CHAIN} documents in a row without a media verb; call ended`,
          requestUrl: context.outcome?.kind === 'fetch' ? context.outcome.url : null,
          requestMethod: context.outcome?.kind === 'fetch' ? context.outcome.method : null,
        }),
      notifyRejectAfterAnswer: ({ context }) =>
        services.notify({
          accountSid: context.call.accountSid,
          callSid: context.call.callSid,
          errorCode: InterpreterErrorCode.SchemaWarning,
          log: 1,
          messageText: '<Reject> after the call was answered; the call was hung up instead',
          requestUrl: context.documentUrl,
        }),
      notifyVerbError: ({ context, event }) =>
        services.notify({
          accountSid: context.call.accountSid,
          callSid: context.call.callSid,
          errorCode: InterpreterErrorCode.InternalFailure,
          log: 1,
          messageText: `<${currentVerb(context)}> failed: ${errorText((event as { error?: unknown }).error)}`,
          requestUrl: context.documentUrl,
        }),
    },
  }).createMachine({
    id: 'interpreter',
    context: ({ input }) => ({
      call: {
        ...input.call,
        apiVersion: input.call.apiVersion ?? DEFAULT_API_VERSION,
        parentCallSid: input.call.parentCallSid ?? null,
        forwardedFrom: input.call.forwardedFrom ?? null,
        callerName: input.call.callerName ?? null,
        extraParams: input.call.extraParams ?? [],
      },
      answered: input.answered ?? false,
      whisper: input.whisper ?? false,
      request: {
        url: input.url,
        method: input.method ?? 'POST',
        params: [],
        fallback: input.fallbackUrl
          ? { url: input.fallbackUrl, method: input.fallbackMethod ?? 'POST' }
          : null,
      },
      documentUrl: null,
      program: [],
      index: 0,
      chain: 0,
      seq: 0,
      outcome: null,
    }),
    // The final state's own output (no context update on the way out).
    output: ({ event }) => (event.output as InterpreterOutput | undefined) ?? CALL_ENDED,
    initial: 'fetching',
    on: {
      'http.redirect': { target: '.fetching', reenter: true, actions: 'requestRestRedirect' },
      'call.ended': [
        // Voicemail: a caller hanging up during <Record> still gets the recording to `action`.
        { guard: stateIn({ executing: { running: 'record' } }), target: '.savingRecording' },
        { target: '.ended' },
      ],
    },
    states: {
      fetching: {
        invoke: {
          src: 'fetchMarkup',
          input: ({ context }) => ({
            request: context.request!,
            call: context.call,
            answered: context.answered,
          }),
          onError: { target: 'hungUp', actions: 'notifyVerbError' },
        },
        on: {
          'markup.fetched': [
            { guard: { type: 'fetchFailed', params: ({ event }) => event.output }, target: 'hungUp' },
            // Straight on to the document's first verb (not through `executing.next`: one step fewer).
            ...goToVerbAt('fetched', [loadFetched] as const),
          ],
          'markup.fetchFailed': { target: 'hungUp', actions: 'notifyVerbError' },
        },
      },
      executing: {
        initial: 'next',
        states: {
          next: {
            always: goToVerbAt(0, [] as const),
          },
          // The answer is a command to the leg; its outcome comes back as an event (a late one, after
          // a redirect or the call's end, finds no transition).
          answering: {
            entry: 'answerCall',
            on: {
              'call.answered': startVerbAt(0, [] as const, true),
              'call.answerFailed': { target: '#interpreter.ended' },
            },
          },
          running: {
            // XState asks for one; never used: every transition here names its verb's state (and
            // starts the verb: `startVerbAt`).
            initial: 'say',
            states: {
              say: verbState('Say'),
              play: verbState('Play'),
              pause: callbackVerbState('Pause'),
              gather: verbState('Gather'),
              record: verbState('Record'),
              dial: verbState('Dial'),
              redirect: verbState('Redirect'),
              sms: verbState('Sms'),
              email: verbState('Email'),
              refer: verbState('Refer'),
            },
          },
          deciding: {
            always: [
              { guard: { type: 'outcomeIs', params: { kind: 'next' } }, target: 'next', actions: 'advance' },
              { guard: { type: 'outcomeIs', params: { kind: 'hangup' } }, target: '#interpreter.hungUp' },
              {
                guard: 'isRejectBeforeAnswer',
                target: '#interpreter.rejected',
              },
              {
                guard: { type: 'outcomeIs', params: { kind: 'reject' } },
                target: '#interpreter.hungUp',
                actions: 'notifyRejectAfterAnswer',
              },
              { guard: 'isFetchOverChainCap', target: '#interpreter.hungUp', actions: 'notifyRedirectLimit' },
              {
                guard: { type: 'outcomeIs', params: { kind: 'fetch' } },
                target: '#interpreter.fetching',
                actions: 'requestFetch',
              },
              // No outcome recorded (not expected): move on rather than stall.
              { target: 'next', actions: 'advance' },
            ],
          },
        },
      },
      hungUp: {
        type: 'final',
        entry: 'hangUpCall',
        output: { end: 'hangup' } satisfies InterpreterOutput,
      },
      rejected: {
        type: 'final',
        entry: 'rejectCall',
        output: ({ context }): InterpreterOutput => ({
          end: 'rejected',
          reason: context.outcome?.kind === 'reject' ? context.outcome.reason : 'rejected',
        }),
      },
      savingRecording: {
        invoke: {
          src: 'recordAfterHangup',
          input: verbInput,
          onDone: 'ended',
          onError: { target: 'ended', actions: 'notifyVerbError' },
        },
        after: { RECORDING_SAVE_TIMEOUT: 'ended' },
        on: {
          // The call is over: nothing can replace or end this step.
          'call.ended': {},
          'http.redirect': {},
        },
      },
      ended: { type: 'final', output: CALL_ENDED },
      documentEnded: { type: 'final', output: { end: 'document-ended' } satisfies InterpreterOutput },
    },
  });
}

/** The interpreter machine type. */
export type InterpreterMachine = ReturnType<typeof createInterpreterMachine>;
