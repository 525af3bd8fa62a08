/** `<Say>`: text to speech. TwiML https://www.twilio.com/docs/voice/twiml/say ; RCML Say. */
import type { AttrsOf, VerbSchema } from '../schema.js';
import { Common } from '../schema.js';

export const sayAttrs = {
  /** man | woman | alice | Polly.* ...: passed to the TTS engine, which maps unknown voices to its default. */
  voice: { type: 'string', default: 'man', pattern: /^[A-Za-z0-9._-]{1,64}$/ },
  /** BCP-47 language tag. */
  language: { type: 'string', default: 'en-US', pattern: /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/ },
  /** Times to repeat; 0 = repeat until the call ends (bounded by the interpreter). */
  loop: Common.loop,
} as const;

export type SayAttrs = AttrsOf<typeof sayAttrs>;

export const say: VerbSchema = {
  name: 'Say',
  attrs: sayAttrs,
  text: { required: true, kind: 'plain' },
  children: [],
};

/**
 * SSML elements TwiML accepts inside `<Say>` (https://www.twilio.com/docs/voice/twiml/say/text-speech#ssml).
 * The parser flattens them into the Say text (their words kept, markup dropped) without diagnostics.
 */
export const SAY_SSML_ELEMENTS: readonly string[] = [
  'break',
  'emphasis',
  'lang',
  'p',
  'phoneme',
  'prosody',
  's',
  'say-as',
  'sub',
  'w',
  'amazon:domain',
  'amazon:effect',
];
