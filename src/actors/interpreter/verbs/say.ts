/**
 * `<Say>`: text to speech on the call's endpoint (TwiML https://www.twilio.com/docs/voice/twiml/say).
 * `loop="0"` repeats until the call ends or the program is replaced. A TTS failure writes a
 * Notification and the program continues, as Twilio does.
 */
import { fromPromise } from 'xstate';
import type { VerbInput, VerbOutcome } from '../interpreter.types.js';
import { type SayAttrs, sayAttrs } from '../markup/index.js';
import type { InterpreterServices } from '../services.js';
import { attrsOf, HANGUP, NEXT, playOn, type VerbDefinition } from './support.js';

export { type SayAttrs, sayAttrs };

/** The `<Say>` verb. */
export const sayVerb: VerbDefinition = {
  name: 'Say',
  attrs: sayAttrs,
  media: true,
  logic: (services: InterpreterServices) =>
    fromPromise<VerbOutcome, VerbInput>(async ({ input, signal }) => {
      const a = attrsOf<SayAttrs>(input);
      const result = await playOn(
        services,
        input,
        signal,
        input.opId,
        { kind: 'tts', text: input.node.text ?? '', voice: a.voice, language: a.language },
        { loop: a.loop },
      );
      return result === 'lost' ? HANGUP : NEXT;
    }),
};
