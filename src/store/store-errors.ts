/**
 * Errors the store layer raises for input it refuses before any I/O. They are domain errors (no
 * client types): the HTTP layer maps them to 400 InvalidParameter, adapters to their own refusal.
 */

import type { InvalidTextReason } from '../storable-text.js';

export { type InvalidTextReason, invalidTextReason } from '../storable-text.js';

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
