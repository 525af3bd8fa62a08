/**
 * `<Redirect>`: replace the program with the document at a URL (TwiML
 * https://www.twilio.com/docs/voice/twiml/redirect). Counts toward the redirect-chain cap.
 */
import { fromPromise } from 'xstate';
import type { VerbInput, VerbOutcome } from '../interpreter.types.js';
import { type RedirectAttrs, redirectAttrs } from '../markup/index.js';
import { resolveUrl } from '../params.js';
import type { InterpreterServices } from '../services.js';
import { attrsOf, HANGUP, notifyVerbFailure, type VerbDefinition } from './support.js';

export { type RedirectAttrs, redirectAttrs };

/** The `<Redirect>` verb. */
export const redirectVerb: VerbDefinition = {
  name: 'Redirect',
  attrs: redirectAttrs,
  media: false,
  logic: (services: InterpreterServices) =>
    fromPromise<VerbOutcome, VerbInput>(async ({ input }) => {
      const url = resolveUrl(input.node.text ?? '', input.documentUrl);
      if (url === null) {
        // Unreachable with parser output (text is an http(s) URL); kept as a defined outcome.
        notifyVerbFailure(services, input, `URL ${JSON.stringify(input.node.text)} cannot be resolved`);
        return HANGUP;
      }
      return { kind: 'fetch', url, method: attrsOf<RedirectAttrs>(input).method, params: [] };
    }),
};
