/** `<Pause>`: silence. TwiML https://www.twilio.com/docs/voice/twiml/pause */
import type { AttrsOf, VerbSchema } from '../schema.js';

export const pauseAttrs = {
  /** Seconds of silence. */
  length: { type: 'integer', default: 1, min: 0, max: 600 },
} as const;

export type PauseAttrs = AttrsOf<typeof pauseAttrs>;

export const pause: VerbSchema = { name: 'Pause', attrs: pauseAttrs, text: null, children: [] };
