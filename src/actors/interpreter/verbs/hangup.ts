/** `<Hangup>`: end the call (TwiML https://www.twilio.com/docs/voice/twiml/hangup). */
import { hangupAttrs } from '../markup/index.js';
import { HANGUP, immediateVerb, type VerbDefinition } from './support.js';

export { hangupAttrs };

/** The `<Hangup>` verb: the interpreter ends the leg through `CallControl.hangup`. */
export const hangupVerb: VerbDefinition = immediateVerb({
  name: 'Hangup',
  attrs: hangupAttrs,
  media: false,
  outcome: () => HANGUP,
});
