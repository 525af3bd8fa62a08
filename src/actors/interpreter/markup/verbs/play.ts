/** `<Play>`: play an audio URL, or DTMF `digits`. TwiML https://www.twilio.com/docs/voice/twiml/play */
import type { AttrsOf, VerbSchema } from '../schema.js';
import { Common } from '../schema.js';

export const playAttrs = {
  loop: Common.loop,
  /** DTMF to play instead of audio (0-9 * # w). */
  digits: { type: 'digits', default: null },
} as const;

export type PlayAttrs = AttrsOf<typeof playAttrs>;

export const play: VerbSchema = {
  name: 'Play',
  attrs: playAttrs,
  text: { required: false, kind: 'url' },
  children: [],
  check: (node) => (node.text === null && node.attrs.digits === null ? 'needs an audio URL or digits' : null),
};
