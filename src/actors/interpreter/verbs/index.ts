/** Registry of the verb actors, by element name (one file per verb). */
import { dialVerb } from './dial.js';
import { emailVerb } from './email.js';
import { gatherVerb } from './gather.js';
import { hangupVerb } from './hangup.js';
import { pauseVerb } from './pause.js';
import { playVerb } from './play.js';
import { recordVerb } from './record.js';
import { redirectVerb } from './redirect.js';
import { referVerb } from './refer.js';
import { rejectVerb } from './reject.js';
import { sayVerb } from './say.js';
import { smsVerb } from './sms.js';
import type { VerbDefinition, VerbLogic } from './support.js';

/** Every top-level voice verb the interpreter runs. */
export const VERBS: readonly VerbDefinition<VerbLogic>[] = [
  sayVerb,
  playVerb,
  pauseVerb,
  gatherVerb,
  recordVerb,
  dialVerb,
  hangupVerb,
  redirectVerb,
  rejectVerb,
  smsVerb,
  emailVerb,
  referVerb,
];

/** Names of the verbs that need an answered call (and reset the redirect chain). */
export const MEDIA_VERBS: ReadonlySet<string> = new Set(VERBS.filter((v) => v.media).map((v) => v.name));

/** The verbs decided by their node alone, by name: recorded at once, no actor started. */
export const IMMEDIATE_VERBS: ReadonlyMap<string, NonNullable<VerbDefinition['outcome']>> = new Map(
  VERBS.flatMap((v) => (v.outcome ? [[v.name, v.outcome] as const] : [])),
);

export {
  dialVerb,
  emailVerb,
  gatherVerb,
  hangupVerb,
  pauseVerb,
  playVerb,
  recordVerb,
  redirectVerb,
  referVerb,
  rejectVerb,
  sayVerb,
  smsVerb,
};
export type { VerbDefinition };
