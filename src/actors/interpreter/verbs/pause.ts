/**
 * `<Pause>`: wait `length` seconds (TwiML https://www.twilio.com/docs/voice/twiml/pause). A media verb
 * in Restcomm's sense: the call is answered first, so `<Pause/><Hangup/>` answers and then hangs up.
 * Inside `<Gather>` a pause is played as silence instead, so a key press interrupts it (gather.ts).
 */
import { fromPromise } from 'xstate';
import type { VerbInput, VerbOutcome } from '../interpreter.types.js';
import { type PauseAttrs, pauseAttrs } from '../markup/index.js';
import type { InterpreterServices } from '../services.js';
import { attrsOf, NEXT, timerSleep, type VerbDefinition } from './support.js';

export { type PauseAttrs, pauseAttrs };

/** The `<Pause>` verb. */
export const pauseVerb: VerbDefinition = {
  name: 'Pause',
  attrs: pauseAttrs,
  media: true,
  logic: (services: InterpreterServices) =>
    fromPromise<VerbOutcome, VerbInput>(async ({ input, signal }) => {
      const { length } = attrsOf<PauseAttrs>(input);
      if (length > 0) await (services.sleep ?? timerSleep)(length * 1000, signal);
      return NEXT;
    }),
};
