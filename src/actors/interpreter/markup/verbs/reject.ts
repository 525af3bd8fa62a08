/**
 * `<Reject>`: refuse an incoming call without answering: reason `rejected` → SIP 603 Decline,
 * `busy` → 486 Busy Here. TwiML https://www.twilio.com/docs/voice/twiml/reject
 */
import type { AttrsOf, VerbSchema } from '../schema.js';

export const rejectAttrs = {
  reason: { type: 'enum', values: ['rejected', 'busy'], default: 'rejected' },
} as const;
export type RejectAttrs = AttrsOf<typeof rejectAttrs>;

/** SIP final response per reason. */
export const REJECT_SIP_STATUS = { rejected: 603, busy: 486 } as const;

export const reject: VerbSchema = { name: 'Reject', attrs: rejectAttrs, text: null, children: [] };
