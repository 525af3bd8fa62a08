/**
 * `<Dial>` and its nouns `<Number>`, `<Client>`, `<Sip>`, `<Conference>`.
 * TwiML https://www.twilio.com/docs/voice/twiml/dial ; RCML Dial.
 */
import type { AttrsOf, VerbSchema } from '../schema.js';
import { Common } from '../schema.js';

export const dialAttrs = {
  action: Common.action,
  method: Common.method,
  /** Seconds to ring before no-answer. */
  timeout: { type: 'integer', default: 30, min: 5, max: 600 },
  /** Maximum call length in seconds once bridged. */
  timeLimit: { type: 'integer', default: 14400, min: 1, max: 86400 },
  /** Caller ID for the new leg; null = the caller's number. */
  callerId: {
    type: 'string',
    default: null,
    pattern: /^(\+?[0-9]{1,20}|client:[A-Za-z0-9_.@+-]{1,128}|[A-Za-z0-9_.@+-]{1,128})$/,
  },
  /** Twilio values; Restcomm's `true`/`false` map onto record-from-answer / do-not-record. */
  record: {
    type: 'enum',
    values: [
      'do-not-record',
      'record-from-answer',
      'record-from-ringing',
      'record-from-answer-dual',
      'record-from-ringing-dual',
    ],
    default: 'do-not-record',
    aliases: { true: 'record-from-answer', false: 'do-not-record' },
  },
  hangupOnStar: { type: 'boolean', default: false },
} as const;

export type DialAttrs = AttrsOf<typeof dialAttrs>;

export const DIAL_NOUNS = ['Number', 'Client', 'Sip', 'Conference'] as const;

export const dial: VerbSchema = {
  name: 'Dial',
  attrs: dialAttrs,
  // Bare text is a number to dial; ignored when nouns are nested (as Twilio does).
  text: { required: false, kind: 'number' },
  children: DIAL_NOUNS,
  check: (node) => {
    if (node.children.length === 0 && node.text === null) return 'needs a number or a nested noun';
    // As in TwiML: a conference is joined alone; it cannot be combined with other nouns or a second room.
    const conferences = node.children.filter((c) => (c as { verb?: string }).verb === 'Conference').length;
    if (conferences > 0 && node.children.length > 1) return 'a <Conference> must be the only noun';
    return null;
  },
};

export const numberAttrs = {
  /** DTMF to send once answered (0-9 * # w). */
  sendDigits: { type: 'digits', default: null },
  /** Markup run on the called party before bridging ("whisper"). */
  url: Common.url,
  method: Common.method,
} as const;
export type NumberAttrs = AttrsOf<typeof numberAttrs>;
export const number: VerbSchema = {
  name: 'Number',
  attrs: numberAttrs,
  text: { required: true, kind: 'number' },
  children: [],
};

export const clientAttrs = { url: Common.url, method: Common.method } as const;
export type ClientAttrs = AttrsOf<typeof clientAttrs>;
export const client: VerbSchema = {
  name: 'Client',
  attrs: clientAttrs,
  text: { required: true, kind: 'identifier' },
  children: [],
};

export const sipAttrs = {
  username: { type: 'string', default: null, maxLength: 256 },
  password: { type: 'string', default: null, maxLength: 256 },
  url: Common.url,
  method: Common.method,
} as const;
export type SipAttrs = AttrsOf<typeof sipAttrs>;
export const sip: VerbSchema = {
  name: 'Sip',
  attrs: sipAttrs,
  text: { required: true, kind: 'sip-uri' },
  children: [],
};

export const conferenceAttrs = {
  muted: { type: 'boolean', default: false },
  beep: { type: 'enum', values: ['true', 'false', 'onEnter', 'onExit'], default: 'true' },
  startConferenceOnEnter: { type: 'boolean', default: true },
  endConferenceOnEnter: { type: 'boolean', default: false },
  /** Hold music markup/audio while waiting; null = the platform's default. */
  waitUrl: Common.url,
  waitMethod: Common.method,
  maxParticipants: { type: 'integer', default: 250, min: 2, max: 250 },
  /** Conference status callbacks (Twilio); the first participant to give one sets it for the room. */
  statusCallback: Common.url,
  statusCallbackMethod: Common.method,
  /** Space-separated among start end join leave mute hold; default `start end`. */
  statusCallbackEvent: {
    type: 'string',
    default: null,
    pattern: /^\s*(?:(?:start|end|join|leave|mute|hold|modify|speaker|announcement)(?:[\s,]+|$))+$/,
    maxLength: 200,
  },
} as const;
export type ConferenceAttrs = AttrsOf<typeof conferenceAttrs>;
export const conference: VerbSchema = {
  name: 'Conference',
  attrs: conferenceAttrs,
  text: { required: true, kind: 'plain' },
  children: [],
};
