/**
 * USSD markup (Restcomm RCML for USSD): `<UssdMessage>` text, `<UssdCollect action method>` holding
 * UssdMessage children (a menu whose reply is posted to `action` as `Digits`), and `<Language>` (one
 * per document, default `en`). Run by the USSD session actor (src/actors/ussd), not the voice
 * interpreter.
 */
import type { AttrsOf, VerbSchema } from '../schema.js';
import { Common } from '../schema.js';

export const ussdMessage: VerbSchema = {
  name: 'UssdMessage',
  attrs: {},
  text: { required: true, kind: 'plain' },
  children: [],
};

export const ussdCollectAttrs = { action: Common.action, method: Common.method } as const;
export type UssdCollectAttrs = AttrsOf<typeof ussdCollectAttrs>;
export const ussdCollect: VerbSchema = {
  name: 'UssdCollect',
  attrs: ussdCollectAttrs,
  text: { required: false, kind: 'plain' },
  children: ['UssdMessage'],
};

export const language: VerbSchema = {
  name: 'Language',
  attrs: {},
  text: { required: true, kind: 'plain' },
  children: [],
};

/** Verbs allowed directly under `<Response>` in USSD markup. */
export const USSD_VERBS: readonly string[] = ['UssdMessage', 'UssdCollect', 'Language'];
