/** `<Gather>`: collect DTMF, with nested Say/Play/Pause. TwiML https://www.twilio.com/docs/voice/twiml/gather */
import type { AttrsOf, VerbSchema } from '../schema.js';
import { Common } from '../schema.js';

export const gatherAttrs = {
  /** Where Digits are sent; null = the current document URL. */
  action: Common.action,
  method: Common.method,
  /** Seconds of inactivity before the Gather ends. */
  timeout: { type: 'integer', default: 5, min: 1, max: 600 },
  /** One key that ends input; '' = none. */
  finishOnKey: { type: 'keys', default: '#', chars: '0123456789*#', maxLength: 1 },
  /** Digits to collect before ending; null = until timeout or finishOnKey. */
  numDigits: { type: 'integer', default: null, min: 1, max: 128 },
} as const;

export type GatherAttrs = AttrsOf<typeof gatherAttrs>;

export const gather: VerbSchema = {
  name: 'Gather',
  attrs: gatherAttrs,
  text: null,
  children: ['Say', 'Play', 'Pause'],
};
