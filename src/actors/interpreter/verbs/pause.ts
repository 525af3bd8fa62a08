/**
 * `<Pause>`: wait `length` seconds (TwiML https://www.twilio.com/docs/voice/twiml/pause). A media verb
 * in Restcomm's sense: the call is answered first, so `<Pause/><Hangup/>` answers and then hangs up.
 * Inside `<Gather>` a pause is played as silence instead, so a key press interrupts it (gather.ts).
 */
import { type PauseAttrs, pauseAttrs } from '../markup/index.js';
import { attrsOf, type VerbDefinition, waitingVerb } from './support.js';

export { type PauseAttrs, pauseAttrs };

/** The `<Pause>` verb. */
export const pauseVerb: VerbDefinition = waitingVerb({
  name: 'Pause',
  attrs: pauseAttrs,
  media: true,
  wait: (input) => Math.max(0, attrsOf<PauseAttrs>(input).length * 1000),
});
