/**
 * `<Play>`: play an audio URL (resolved against the document URL), or send DTMF `digits` to the far
 * end (TwiML https://www.twilio.com/docs/voice/twiml/play). A fetch or format failure writes a
 * Notification (11200 / 12300 / 11750) and the program continues.
 */
import { fromPromise } from 'xstate';
import type { VerbInput, VerbOutcome } from '../interpreter.types.js';
import { type PlayAttrs, playAttrs } from '../markup/index.js';
import { resolveUrl } from '../params.js';
import type { InterpreterServices } from '../services.js';
import {
  attrsOf,
  errorText,
  HANGUP,
  NEXT,
  notifyVerbFailure,
  playOn,
  type VerbDefinition,
} from './support.js';

export { type PlayAttrs, playAttrs };

/** The `<Play>` verb. */
export const playVerb: VerbDefinition = {
  name: 'Play',
  attrs: playAttrs,
  media: true,
  logic: (services: InterpreterServices) =>
    fromPromise<VerbOutcome, VerbInput>(async ({ input, signal }) => {
      const a = attrsOf<PlayAttrs>(input);
      if (a.digits !== null) {
        try {
          await services.call.sendDigits(input.call.callSid, a.digits, signal);
        } catch (err) {
          if (signal.aborted) throw err;
          notifyVerbFailure(services, input, `could not send digits: ${errorText(err)}`);
        }
        if (input.node.text === null) return NEXT;
      }
      const url = resolveUrl(input.node.text ?? '', input.documentUrl);
      if (url === null) {
        notifyVerbFailure(services, input, `URL ${JSON.stringify(input.node.text)} cannot be resolved`);
        return NEXT;
      }
      const result = await playOn(
        services,
        input,
        signal,
        input.opId,
        { kind: 'url', url },
        { loop: a.loop },
      );
      return result === 'lost' ? HANGUP : NEXT;
    }),
};
