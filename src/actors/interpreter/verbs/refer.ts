/**
 * `<Refer>`: blind transfer of the caller's SIP leg (TwiML https://www.twilio.com/docs/voice/twiml/refer):
 * REFER to the far end with the nested `<Sip>` as Refer-To, then the NOTIFYs of the new call's
 * progress until a final status. With `action`, request it with ReferSipResponseCode (the REFER's
 * response), and when a NOTIFY reported a status, NotifySipResponseCode and ReferCallStatus
 * (in-progress for 2xx, busy for 486/600, no-answer for 487, failed otherwise; canceled when the
 * leg ended first; failed without NotifySipResponseCode when the REFER was refused); without an
 * action, continue with the next verb. The leg is not hung up by the verb: the far end usually ends
 * it after a successful transfer, or the markup does.
 */
import { fromPromise } from 'xstate';
import type { VerbInput, VerbOutcome } from '../interpreter.types.js';
import { type ReferAttrs, referAttrs } from '../markup/index.js';
import { resolveUrl } from '../params.js';
import type { InterpreterServices, ReferOutcome } from '../services.js';
import { attrsOf, NEXT, type VerbDefinition } from './support.js';

export { type ReferAttrs, referAttrs };

/** Twilio's ReferCallStatus for an outcome; null when there is none to report. */
export function referCallStatus(o: ReferOutcome): string | null {
  if (o.referStatus < 200 || o.referStatus >= 300) return 'failed';
  const n = o.notifyStatus;
  if (n === null || n < 200) return o.ended ? 'canceled' : null;
  if (n < 300) return 'in-progress';
  if (n === 486 || n === 600) return 'busy';
  if (n === 487) return 'no-answer';
  return 'failed';
}

/** Parameters posted to the Refer action. */
export function referParams(o: ReferOutcome): Array<readonly [string, string]> {
  const out: Array<readonly [string, string]> = [];
  const status = referCallStatus(o);
  if (status) out.push(['ReferCallStatus', status]);
  out.push(['ReferSipResponseCode', String(o.referStatus)]);
  if (o.notifyStatus !== null) out.push(['NotifySipResponseCode', String(o.notifyStatus)]);
  return out;
}

/** The `<Refer>` verb. */
export const referVerb: VerbDefinition = {
  name: 'Refer',
  attrs: referAttrs,
  // REFER needs the dialog of an answered leg.
  media: true,
  logic: (services: InterpreterServices) =>
    fromPromise<VerbOutcome, VerbInput>(async ({ input, signal }) => {
      const a = attrsOf<ReferAttrs>(input);
      const target = input.node.children[0]?.text ?? '';
      const outcome = await services.call.refer(input.call.callSid, target, signal);
      if (a.action === null) return NEXT;
      const url = resolveUrl(a.action, input.documentUrl) ?? input.documentUrl;
      return { kind: 'fetch', url, method: a.method, params: referParams(outcome) };
    }),
};
