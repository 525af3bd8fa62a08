/**
 * Errors the store layer raises for input it refuses before any I/O. They are domain errors (no
 * client types): the HTTP layer maps them to 400 InvalidParameter, adapters to their own refusal.
 */

/** Why a text value cannot be stored. */
export type InvalidTextReason = 'nul' | 'lone-surrogate';

/**
 * A text value holds a character Postgres cannot store: NUL (0x00; `text` never holds it, and
 * jsonb refuses `\u0000`) or an unpaired UTF-16 surrogate (not encodable as UTF-8). Raised before
 * the statement is sent, so nothing is written.
 */
export class StoreInputError extends Error {
  override readonly name = 'StoreInputError';
  constructor(
    /** The column (or statement parameter, when the column cannot be told) holding the value. */
    readonly column: string,
    readonly reason: InvalidTextReason,
  ) {
    super(
      `${column} may not contain ${reason === 'nul' ? 'a NUL (0x00) character' : 'an unpaired UTF-16 surrogate'}`,
    );
  }
}

export const isStoreInputError = (e: unknown): e is StoreInputError => e instanceof StoreInputError;

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The reason `s` cannot be stored, or null when it can. */
export function invalidTextReason(s: string): InvalidTextReason | null {
  if (s.includes('\u0000')) return 'nul';
  if (LONE_SURROGATE.test(s)) return 'lone-surrogate';
  return null;
}
