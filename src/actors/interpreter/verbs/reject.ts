/**
 * `<Reject>`: refuse the call without answering (TwiML https://www.twilio.com/docs/voice/twiml/reject):
 * reason `rejected` → SIP 603 Decline, `busy` → 486 Busy Here (`REJECT_SIP_STATUS`). Only valid
 * before the call is answered; afterwards the interpreter writes a 12200 Notification and hangs up.
 */
import { REJECT_SIP_STATUS, type RejectAttrs, rejectAttrs } from '../markup/index.js';
import { attrsOf, immediateVerb, type VerbDefinition } from './support.js';

export { REJECT_SIP_STATUS, type RejectAttrs, rejectAttrs };

/** The `<Reject>` verb. */
export const rejectVerb: VerbDefinition = immediateVerb({
  name: 'Reject',
  attrs: rejectAttrs,
  media: false,
  outcome: (input) => ({ kind: 'reject', reason: attrsOf<RejectAttrs>(input).reason }),
});
