/**
 * `<Sms>` during a call (RCML Sms; Twilio's former `<Sms>` verb): `to` defaults to the caller, `from`
 * to the called number. With `action`, request it with SmsSid and SmsStatus (`failed` when sending
 * failed); without, continue with the next verb.
 */
import { fromPromise } from 'xstate';
import type { VerbInput, VerbOutcome } from '../interpreter.types.js';
import { type SmsAttrs, smsAttrs } from '../markup/index.js';
import { resolveUrl } from '../params.js';
import type { InterpreterServices, SmsOutcome } from '../services.js';
import { attrsOf, errorText, NEXT, notifyVerbFailure, type VerbDefinition } from './support.js';

export { type SmsAttrs, smsAttrs };

/** The `<Sms>` verb. */
export const smsVerb: VerbDefinition = {
  name: 'Sms',
  attrs: smsAttrs,
  media: false,
  logic: (services: InterpreterServices) =>
    fromPromise<VerbOutcome, VerbInput>(async ({ input, signal }) => {
      const a = attrsOf<SmsAttrs>(input);
      let outcome: SmsOutcome | null = null;
      try {
        outcome = await services.sendSms(
          {
            accountSid: input.call.accountSid,
            callSid: input.call.callSid,
            from: a.from ?? input.call.to,
            to: a.to ?? input.call.from,
            body: input.node.text ?? '',
            statusCallback:
              a.statusCallback === null ? null : resolveUrl(a.statusCallback, input.documentUrl),
          },
          signal,
        );
      } catch (err) {
        if (signal.aborted) throw err;
        notifyVerbFailure(services, input, `could not be sent: ${errorText(err)}`);
      }
      if (a.action === null) return NEXT;
      const url = resolveUrl(a.action, input.documentUrl) ?? input.documentUrl;
      const params: Array<readonly [string, string]> = [];
      if (outcome) params.push(['SmsSid', outcome.sid]);
      params.push(['SmsStatus', outcome?.status ?? 'failed']);
      return { kind: 'fetch', url, method: a.method, params };
    }),
};
