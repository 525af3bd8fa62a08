/**
 * JSON request documents, parsed without letting hostile input reach the stores or blow the stack:
 * the nesting depth is measured by a linear scan before JSON.parse (so 10,000 levels cost one pass
 * over the bytes, not 10,000 stack frames), and every string (member names included) must be
 * well-formed Unicode without NUL — Postgres' jsonb refuses `\u0000` and lone surrogates, and we
 * would rather name the member than answer 500.
 */
import { AppError } from '../errors.js';
import { firstUnstorableMember, jsonPointer } from '../json-members.js';

/** Deepest nesting of objects and arrays accepted in a JSON document (docs/errors.md). */
export const JSON_MAX_DEPTH = 64;

/**
 * The deepest object/array nesting of `text`, stopping as soon as `limit` is exceeded. Strings are
 * skipped with their escapes, so brackets inside them do not count. Linear in the length of `text`.
 */
export function jsonDepth(text: string, limit = JSON_MAX_DEPTH): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      depth++;
      if (depth > max) {
        max = depth;
        if (max > limit) return max;
      }
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
  return max;
}

/** Throws a 400 naming (as a JSON Pointer after `what`) the first member that may not be stored. */
export function assertStorableJson(value: unknown, what: string): void {
  const bad = firstUnstorableMember(value);
  if (bad) throw new AppError('InvalidParameter', `${what} ${jsonPointer(bad.path)} ${bad.problem}`.trim());
}

/**
 * Parses a JSON document from the network: 400 MalformedBody (21102) when it does not parse or nests
 * deeper than JSON_MAX_DEPTH; 400 InvalidParameter (21100) naming the member that holds NUL or an
 * unpaired surrogate. `what` names the document in messages (e.g. "Request body", "ConfigurationData").
 */
export function parseJsonSafely(text: string, what: string): unknown {
  if (jsonDepth(text) > JSON_MAX_DEPTH) {
    throw new AppError('MalformedBody', `${what} nests deeper than ${JSON_MAX_DEPTH} levels`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AppError('MalformedBody', `${what} is not valid JSON`);
  }
  assertStorableJson(value, what === 'Request body' ? '' : what);
  return value;
}
