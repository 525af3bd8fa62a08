/**
 * From a USSD markup document to the one message a USSD step sends (Restcomm's UssdInterpreter):
 * the `<UssdMessage>` texts joined by newlines, then the texts inside `<UssdCollect>` (a menu), in
 * the document's `<Language>` (the first one; default `en`). A body that is not XML is one message.
 *
 * A message longer than the handset can show — 182 characters in English (GSM 7-bit in 160 octets),
 * 80 in other languages (UCS-2) — is replaced by a fixed error text, and the account gets
 * Notification 11100, as Restcomm does.
 */
import { type Diagnostic, parseMarkup, type VerbNode } from '../interpreter/markup/index.js';

/** Longest message in English and in any other language (3GPP TS 23.038 USSD string limits). */
export const USSD_MAX_LENGTH_EN = 182;
export const USSD_MAX_LENGTH_OTHER = 80;

/** Notification code of a message over the limit (Restcomm's). */
export const USSD_TOO_LONG_CODE = 11100;

/** What the handset sees instead of a message over the limit (Restcomm's text). */
export const USSD_TOO_LONG_TEXT = 'Error while preparing the response.\nMessage length exceeds the maximum.';

/** One step of a USSD session as the markup asks for it. */
export interface UssdReply {
  readonly language: string;
  readonly text: string;
  /** Where the handset's answer goes (`UssdCollect`), or null when this message ends the session. */
  readonly collect: { readonly action: string | null; readonly method: 'GET' | 'POST' } | null;
  /** The text was over the limit and replaced by {@link USSD_TOO_LONG_TEXT}. */
  readonly tooLong: { readonly length: number; readonly max: number } | null;
}

export type UssdMarkup =
  | { readonly ok: true; readonly reply: UssdReply; readonly diagnostics: readonly Diagnostic[] }
  | { readonly ok: false; readonly error: Diagnostic };

/** The length limit of a language. */
export function maxLengthOf(language: string): number {
  return language.trim().toLowerCase() === 'en' ? USSD_MAX_LENGTH_EN : USSD_MAX_LENGTH_OTHER;
}

/** Reads a markup response body: USSD markup, or plain text (one message). */
export function readUssdMarkup(body: string): UssdMarkup {
  const trimmed = body.trim();
  if (trimmed !== '' && !trimmed.startsWith('<'))
    return { ok: true, reply: replyOf('en', trimmed, null), diagnostics: [] };
  const parsed = parseMarkup(body, { mode: 'ussd' });
  if (!parsed.ok) return { ok: false, error: parsed.error };
  return { ok: true, reply: replyFromProgram(parsed.program), diagnostics: parsed.diagnostics };
}

/** The reply a parsed USSD program asks for. */
export function replyFromProgram(program: readonly VerbNode[]): UssdReply {
  const language = program.find((v) => v.verb === 'Language')?.text ?? 'en';
  const texts = program.filter((v) => v.verb === 'UssdMessage').map((v) => v.text ?? '');
  const collect = program.find((v) => v.verb === 'UssdCollect');
  if (collect) {
    const inner = collect.children.filter((c) => c.verb === 'UssdMessage').map((c) => c.text ?? '');
    texts.push(...(inner.length > 0 ? inner : collect.text ? [collect.text] : []));
  }
  const action = collect && typeof collect.attrs.action === 'string' ? collect.attrs.action : null;
  const method = collect?.attrs.method === 'GET' ? 'GET' : 'POST';
  return replyOf(language, texts.join('\n'), collect ? { action, method } : null);
}

function replyOf(language: string, text: string, collect: UssdReply['collect']): UssdReply {
  const max = maxLengthOf(language);
  // Code points, as a handset counts characters (an emoji is one, not two UTF-16 units).
  const length = [...text].length;
  return length > max
    ? { language, text: USSD_TOO_LONG_TEXT, collect: null, tooLong: { length, max } }
    : { language, text, collect, tooLong: null };
}
