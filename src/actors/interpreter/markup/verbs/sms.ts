/** `<Sms>`: send an SMS during a call or in SMS markup (RCML Sms; Twilio's former `<Sms>` verb). */
import type { AttrsOf, VerbSchema } from '../schema.js';
import { Common } from '../schema.js';

export const smsAttrs = {
  /** Destination; null = the caller / sender of the inbound message. */
  to: { type: 'string', default: null, maxLength: 256 },
  /** Sender; null = the called number. */
  from: { type: 'string', default: null, maxLength: 256 },
  action: Common.action,
  method: Common.method,
  statusCallback: { type: 'url', default: null },
} as const;
export type SmsAttrs = AttrsOf<typeof smsAttrs>;
export const sms: VerbSchema = {
  name: 'Sms',
  attrs: smsAttrs,
  text: { required: true, kind: 'plain' },
  children: [],
};
