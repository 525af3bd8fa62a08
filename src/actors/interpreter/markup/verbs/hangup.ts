/** `<Hangup>`: end the call. TwiML https://www.twilio.com/docs/voice/twiml/hangup */
import type { VerbSchema } from '../schema.js';

export const hangupAttrs = {} as const;
export const hangup: VerbSchema = { name: 'Hangup', attrs: hangupAttrs, text: null, children: [] };
