/**
 * `<Pause>`: wait `length` seconds (TwiML https://www.twilio.com/docs/voice/twiml/pause). A media verb
 * in Restcomm's sense: the call is answered first, so `<Pause/><Hangup/>` answers and then hangs up.
 * Inside `<Gather>` a pause is played as silence instead, so a key press interrupts it (gather.ts).
 *
 * A timer and nothing else, so its actor is a callback that sends `verb.done` when the timer fires
 * and clears it when stopped (REST redirect, call ended): no promise, AbortController or second
 * step of its own. A restored interpreter restarts it, so a restored Pause waits again.
 */
import { type CallbackActorLogic, fromCallback } from 'xstate';
import type { VerbDone, VerbInput } from '../interpreter.types.js';
import { type PauseAttrs, pauseAttrs } from '../markup/index.js';
import type { InterpreterServices } from '../services.js';
import { attrsOf, NEXT, type VerbDefinition } from './support.js';

export { type PauseAttrs, pauseAttrs };

const DONE: VerbDone = { type: 'verb.done', output: NEXT };

/** The Pause actor: `verb.done` after `length` seconds (at once, a microtask later, for 0). */
export function pauseLogic(services: InterpreterServices): CallbackActorLogic<VerbDone, VerbInput> {
  return fromCallback<VerbDone, VerbInput>(({ input, sendBack }) => {
    const ms = attrsOf<PauseAttrs>(input).length * 1000;
    const done = () => sendBack(DONE);
    if (ms <= 0) {
      queueMicrotask(done);
      return;
    }
    const sleep = services.sleep;
    if (sleep) {
      const abort = new AbortController();
      sleep(ms, abort.signal).then(done, () => {});
      return () => abort.abort();
    }
    const timer = setTimeout(done, ms);
    return () => clearTimeout(timer);
  });
}

/** The `<Pause>` verb. */
export const pauseVerb: VerbDefinition<CallbackActorLogic<VerbDone, VerbInput>> = {
  name: 'Pause',
  attrs: pauseAttrs,
  media: true,
  logic: pauseLogic,
};
