/** `<Hangup>`: end the call (TwiML https://www.twilio.com/docs/voice/twiml/hangup). */
import { fromPromise } from 'xstate';
import type { VerbInput, VerbOutcome } from '../interpreter.types.js';
import { hangupAttrs } from '../markup/index.js';
import { HANGUP, type VerbDefinition } from './support.js';

export { hangupAttrs };

/** The `<Hangup>` verb: the interpreter ends the leg through `CallControl.hangup`. */
export const hangupVerb: VerbDefinition = {
  name: 'Hangup',
  attrs: hangupAttrs,
  media: false,
  logic: () => fromPromise<VerbOutcome, VerbInput>(async () => HANGUP),
};
