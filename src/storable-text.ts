/**
 * Text the store can hold. Postgres `text` never holds NUL, jsonb refuses `\u0000`, and an unpaired
 * UTF-16 surrogate has no UTF-8 form: values with either are refused at the edges (naming where) or,
 * when they only quote what someone else sent, shown in a storable form.
 */

/** Why a text value cannot be stored. */
export type InvalidTextReason = 'nul' | 'lone-surrogate';

/** What a refusal says about a value with that reason. */
export const INVALID_TEXT_PROBLEM: Readonly<Record<InvalidTextReason, string>> = {
  nul: 'must not contain NUL characters',
  'lone-surrogate': 'must be well-formed Unicode (it has a lone surrogate)',
};

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

/** The reason `s` cannot be stored, or null when it can. */
export function invalidTextReason(s: string): InvalidTextReason | null {
  if (s.includes('\u0000')) return 'nul';
  if (LONE_SURROGATE.test(s)) return 'lone-surrogate';
  return null;
}

/**
 * `text` with NUL shown as ␀ (U+2400, so the reader still sees where it was) and unpaired surrogates
 * as U+FFFD (as a UTF-8 decoder would have made them); the same string when clean. For text that
 * quotes what a customer's server or a carrier sent, which must not cost the record explaining it.
 */
export function storableText(text: string): string {
  return text.replaceAll('\u0000', '\u2400').replace(LONE_SURROGATES, '\uFFFD');
}

/** `storableText` over every name and value of a header map. */
export function storableHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) out[storableText(k)] = storableText(v);
  return out;
}
