/** Registry of every verb and noun schema, by element name. */
import type { VerbSchema } from '../schema.js';
import { client, conference, dial, number, sip } from './dial.js';
import { email } from './email.js';
import { gather } from './gather.js';
import { hangup } from './hangup.js';
import { pause } from './pause.js';
import { play } from './play.js';
import { record } from './record.js';
import { redirect } from './redirect.js';
import { refer } from './refer.js';
import { reject } from './reject.js';
import { say } from './say.js';
import { sms } from './sms.js';
import { language, ussdCollect, ussdMessage } from './ussd.js';

export const SCHEMAS: ReadonlyMap<string, VerbSchema> = new Map(
  [
    say,
    play,
    pause,
    gather,
    record,
    dial,
    number,
    client,
    sip,
    conference,
    hangup,
    redirect,
    reject,
    sms,
    email,
    ussdMessage,
    ussdCollect,
    language,

    refer,
  ].map((s) => [s.name, s]),
);

/** Verbs allowed directly under `<Response>` in voice markup. */
export const VOICE_VERBS: readonly string[] = [
  'Say',
  'Play',
  'Pause',
  'Gather',
  'Record',
  'Dial',
  'Hangup',
  'Redirect',
  'Reject',
  'Sms',
  'Email',
  'Refer',
];

/** Verbs allowed directly under `<Response>` in SMS markup. */
export const SMS_VERBS: readonly string[] = ['Sms', 'Redirect', 'Email'];

export * from './dial.js';
export * from './email.js';
export * from './gather.js';
export * from './hangup.js';
export * from './pause.js';
export * from './play.js';
export * from './record.js';
export * from './redirect.js';
export * from './refer.js';
export * from './reject.js';
export * from './say.js';
export * from './sms.js';
export * from './ussd.js';
