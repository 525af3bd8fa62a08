/** `<Redirect>`: replace the program with the markup at a URL. TwiML https://www.twilio.com/docs/voice/twiml/redirect */
import type { AttrsOf, VerbSchema } from '../schema.js';
import { Common } from '../schema.js';

export const redirectAttrs = { method: Common.method } as const;
export type RedirectAttrs = AttrsOf<typeof redirectAttrs>;
export const redirect: VerbSchema = {
  name: 'Redirect',
  attrs: redirectAttrs,
  text: { required: true, kind: 'url' },
  children: [],
};
