/**
 * The interpreter machine's building blocks that are plain functions of its context: a verb's input,
 * the look-ahead that lets one transition leave a finished verb (or a fetch) and start the next in a
 * single step, and the transition lists that start a verb or go on to the next one. Kept apart from
 * the machine's `setup()` (interpreter.machine.ts), which names the guards and actions they refer to.
 */
import type { FetchMarkupOutput } from './fetch-markup.js';
import type { InterpreterContext, InterpreterOutput, VerbInput, VerbOutcome } from './interpreter.types.js';
import { MEDIA_VERBS } from './verbs/index.js';

/**
 * The input of the current verb; `seq` and `index` are the verb's (the context's unless it is being
 * started).
 */
export const inputOfVerb = (
  context: InterpreterContext,
  seq = context.seq,
  index = context.index,
): VerbInput => ({
  node: context.program[index]!,
  call: context.call,
  answered: context.answered,
  documentUrl: context.documentUrl ?? '',
  opId: `v${seq}`,
});
export const verbInput = ({ context }: { context: InterpreterContext }): VerbInput => inputOfVerb(context);

export const CALL_ENDED: InterpreterOutput = { end: 'call-ended' };

/** Actor names of the verbs: the element names, so the routing table reads like the markup. */
export type VerbSrc =
  | 'Say'
  | 'Play'
  | 'Pause'
  | 'Gather'
  | 'Record'
  | 'Dial'
  | 'Redirect'
  | 'Sms'
  | 'Email'
  | 'Refer';

export const currentVerb = (context: InterpreterContext): string | null =>
  context.program[context.index]?.verb ?? null;

export const recordOutcome = {
  type: 'recordOutcome',
  params: ({ event }: { event: { output: VerbOutcome } }) => event.output,
} as const;

/** `verb.finished` for the outcome a verb actor returned (the context's outcome is not needed for it). */
export const emitFinishedWith = {
  type: 'emitVerbFinished',
  params: ({ event }: { event: { output: VerbOutcome } }) => ({ outcome: event.output.kind }),
} as const;

/** The states of the verbs that run as actors, by element name. */
const VERB_STATES = [
  ['Say', 'say'],
  ['Play', 'play'],
  ['Pause', 'pause'],
  ['Gather', 'gather'],
  ['Record', 'record'],
  ['Dial', 'dial'],
  ['Redirect', 'redirect'],
  ['Sms', 'sms'],
  ['Email', 'email'],
  ['Refer', 'refer'],
] as const satisfies ReadonlyArray<readonly [VerbSrc, string]>;

/**
 * Which verb a choice is about: the current one (0); the one after the verb that just finished (1:
 * the transition's actions `advance` to it first); or the first of the document just fetched
 * (`fetched`: the actions load it first). Guards are evaluated before actions, so a transition that
 * leaves a finished verb or a fetch and starts the next verb in one step looks ahead.
 */
export type Ahead = 0 | 1 | 'fetched';
/** The program a choice looks at, and where in it. */
const fetchedProgram = (output: FetchMarkupOutput | undefined) => (output?.ok ? output.program : null);
export const programAt = (context: InterpreterContext, event: { type: string }, ahead: Ahead) =>
  ahead === 'fetched'
    ? (fetchedProgram((event as { output?: FetchMarkupOutput }).output) ?? [])
    : context.program;
export const indexAt = (context: InterpreterContext, ahead: Ahead): number =>
  ahead === 'fetched' ? 0 : context.index + ahead;
export const verbAt = (context: InterpreterContext, event: { type: string }, ahead: Ahead): string | null =>
  programAt(context, event, ahead)[indexAt(context, ahead)]?.verb ?? null;

/**
 * What starting a verb changes: its sequence number, and the redirect chain count (a media verb
 * resets it); with `advance`, the verb after the current one is started, and the index moves to it
 * in the same update (what `advance` would do first).
 */
export const started = (context: InterpreterContext, advance: boolean) => {
  const index = advance ? context.index + 1 : context.index;
  return {
    index,
    outcome: advance ? null : context.outcome,
    seq: context.seq + 1,
    chain: MEDIA_VERBS.has(context.program[index]?.verb ?? '') ? 0 : context.chain,
  };
};

/** A fetched document becomes the program (see `loadProgram`). */
export const loadFetched = {
  type: 'loadProgram',
  params: ({ event }: { event: { output: FetchMarkupOutput } }) => event.output,
} as const;

/**
 * Starts the verb `ahead` places on, after `before`: `running.<verb>`,
 * counted and announced on the way in, or, for Hangup and Reject, whose outcome is their node's, no
 * actor to start and wait for (Hangup ends the document at once; Reject's outcome depends on the
 * answer: `deciding`). Taken straight from where the verb is reached (a verb done, `next`, the
 * answer) rather than through a routing state of its own: each step is a snapshot built and thrown
 * away. `answered`: reached from the answer, recorded in the same update as the verb's start. From
 * a finished verb (ahead 1), the start's own update moves the index on.
 */
export const startVerbAt = <const B extends readonly unknown[]>(
  ahead: Ahead,
  before: B,
  answered = false,
) => {
  const params = { advance: ahead === 1 };
  const start = answered ? ('startAnsweredVerb' as const) : ({ type: 'startVerb', params } as const);
  const startImmediate = { type: 'startImmediateVerb', params } as const;
  const mark = answered ? (['markAnswered'] as const) : ([] as const);
  return [
    {
      guard: { type: 'isVerb' as const, params: { verb: 'Hangup' as const, ahead } },
      target: '#interpreter.hungUp',
      actions: [...before, ...mark, startImmediate, 'emitVerbStarted', 'emitVerbFinished'] as const,
    },
    {
      guard: { type: 'isImmediate' as const, params: { ahead } },
      target: '#interpreter.executing.deciding',
      actions: [...before, ...mark, startImmediate, 'emitVerbStarted', 'emitVerbFinished'] as const,
    },
    ...VERB_STATES.map(([verb, state]) => ({
      guard: { type: 'isVerb' as const, params: { verb, ahead } },
      target: `#interpreter.executing.running.${state}` as const,
      // The same verb again (`<Say/><Say/>`) is a new actor: its state is left and entered again.
      reenter: true,
      actions: [...before, start, 'emitVerbStarted'] as const,
    })),
    // Not reachable with parser output (it drops what it cannot run); skip defensively.
    {
      target: '#interpreter.executing.next',
      actions: [...before, start, 'emitVerbStarted', 'advance'] as const,
    },
  ] as const;
};

/**
 * Goes on to the verb `ahead` places on: the end of the document, the answer it needs, or the verb.
 * From a finished verb (ahead 1) the index moves on: by `advance`, or in the verb's start.
 */
export const goToVerbAt = <const B extends readonly unknown[]>(ahead: Ahead, before: B) => {
  const moved = ahead === 1 ? ([...before, 'advance'] as const) : before;
  return [
    {
      guard: { type: 'isEndOfWhisper' as const, params: { ahead } },
      target: '#interpreter.documentEnded',
      actions: moved,
    },
    {
      guard: { type: 'isEndOfProgram' as const, params: { ahead } },
      target: '#interpreter.hungUp',
      actions: moved,
    },
    {
      guard: { type: 'needsAnswer' as const, params: { ahead } },
      target: '#interpreter.executing.answering',
      actions: moved,
    },
    ...startVerbAt(ahead, before),
  ] as const;
};
