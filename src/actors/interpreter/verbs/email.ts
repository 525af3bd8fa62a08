/**
 * `<Email>` during a call (RCML Email verb): sends the text as the body; continues with the next verb
 * whether or not sending worked (a failure writes a Notification).
 */
import { fromPromise } from 'xstate';
import type { VerbInput, VerbOutcome } from '../interpreter.types.js';
import { type EmailAttrs, emailAttrs } from '../markup/index.js';
import type { InterpreterServices } from '../services.js';
import { attrsOf, errorText, NEXT, notifyVerbFailure, type VerbDefinition } from './support.js';

export { type EmailAttrs, emailAttrs };

/** The `<Email>` verb. */
export const emailVerb: VerbDefinition = {
  name: 'Email',
  attrs: emailAttrs,
  media: false,
  logic: (services: InterpreterServices) =>
    fromPromise<VerbOutcome, VerbInput>(async ({ input, signal }) => {
      const a = attrsOf<EmailAttrs>(input);
      try {
        const r = await services.sendEmail(
          {
            accountSid: input.call.accountSid,
            callSid: input.call.callSid,
            to: a.to ?? '',
            from: a.from,
            cc: a.cc,
            bcc: a.bcc,
            subject: a.subject,
            body: input.node.text ?? '',
            type: a.type,
          },
          signal,
        );
        if (r.status === 'failed') notifyVerbFailure(services, input, 'could not be sent');
      } catch (err) {
        if (signal.aborted) throw err;
        notifyVerbFailure(services, input, `could not be sent: ${errorText(err)}`);
      }
      return NEXT;
    }),
};
