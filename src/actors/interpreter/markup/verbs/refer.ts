/**
 * `<Refer>`: blind transfer of the caller's SIP leg by REFER, one nested `<Sip>` as the target.
 * TwiML https://www.twilio.com/docs/voice/twiml/refer
 */
import type { AttrsOf, VerbSchema } from '../schema.js';
import { Common } from '../schema.js';

export const referAttrs = { action: Common.action, method: Common.method } as const;
export type ReferAttrs = AttrsOf<typeof referAttrs>;
export const refer: VerbSchema = {
  name: 'Refer',
  attrs: referAttrs,
  text: null,
  children: ['Sip'],
  check: (node) => (node.children.length === 1 ? null : 'needs exactly one nested <Sip>'),
};
