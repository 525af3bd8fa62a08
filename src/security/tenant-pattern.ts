/**
 * Regular expressions supplied by tenants (multi-provider `match`, in an extension configuration or a
 * subscriber profile; spec §Multi-provider extension, behaviour 4) run on RE2, whose matching time
 * is linear in the input: a pattern such as `(a+)+X` cannot stall the event loop that every tenant's
 * calls share, as it does on the backtracking JavaScript engine.
 *
 * RE2 accepts the JavaScript syntax the spec's examples use (`^uri.*`, `\+1`, classes, groups,
 * alternation, bounded repetition) but has no lookaround and no backreferences; such patterns are
 * refused with a reason, as are patterns that do not compile and patterns longer than
 * {@link TENANT_PATTERN_MAX_LENGTH}. Writes check with {@link tenantPatternProblem} so a bad pattern
 * is a 400 naming its member and is never stored; the routing path compiles with
 * {@link compileTenantPattern}, which caches compiled patterns.
 */
import RE2 from 're2';

/** Longest pattern accepted, in UTF-16 code units. RE2 also caps the compiled program's memory. */
export const TENANT_PATTERN_MAX_LENGTH = 1024;

/** Why a tenant pattern was refused. */
export const TenantPatternReason = {
  /** Not a string, or empty where a pattern is required. */
  NotAString: 'not-a-string',
  TooLong: 'too-long',
  /** Lookahead, lookbehind or a backreference: they need backtracking, which RE2 does not do. */
  Unsupported: 'unsupported',
  /** Does not compile (unbalanced parenthesis, bad escape, repetition too large...). */
  Syntax: 'syntax',
} as const;
export type TenantPatternReason = (typeof TenantPatternReason)[keyof typeof TenantPatternReason];

/** A tenant pattern that cannot be used; `message` is a sentence fit for the API client. */
export class TenantPatternError extends Error {
  override readonly name = 'TenantPatternError';
  constructor(
    readonly reason: TenantPatternReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A compiled tenant pattern: unanchored search, as `RegExp.prototype.test`. */
export interface TenantPattern {
  readonly source: string;
  test(text: string): boolean;
}

// Lookaround and backreferences as RE2 reports them ("invalid perl operator: (?<=",
// "invalid escape sequence: \1"), told apart from plain syntax errors for a clearer message.
const UNSUPPORTED = /invalid perl operator: \(\?<?[=!]|invalid escape sequence: \\(?:[1-9]|k)/;

function compile(pattern: unknown): RE2 {
  if (typeof pattern !== 'string') {
    throw new TenantPatternError(TenantPatternReason.NotAString, 'must be a string');
  }
  if (pattern.length > TENANT_PATTERN_MAX_LENGTH) {
    throw new TenantPatternError(
      TenantPatternReason.TooLong,
      `must be at most ${TENANT_PATTERN_MAX_LENGTH} characters`,
    );
  }
  try {
    return new RE2(pattern);
  } catch (e) {
    const detail = e instanceof Error ? e.message : String(e);
    if (UNSUPPORTED.test(detail)) {
      throw new TenantPatternError(
        TenantPatternReason.Unsupported,
        `uses lookaround or a backreference, which are not supported (${detail})`,
        { cause: e },
      );
    }
    throw new TenantPatternError(
      TenantPatternReason.Syntax,
      `is not a valid regular expression (${detail})`,
      { cause: e },
    );
  }
}

/** Compiled patterns by source; bounded so tenants cannot grow it without limit. */
const cache = new Map<string, TenantPattern>();
const CACHE_MAX = 256;

/**
 * Compiles a tenant pattern for matching.
 * @throws TenantPatternError when the pattern is refused (see the module header)
 */
export function compileTenantPattern(pattern: string): TenantPattern {
  const hit = cache.get(pattern);
  if (hit) return hit;
  const re = compile(pattern);
  const compiled: TenantPattern = { source: pattern, test: (text) => re.test(text) };
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value as string);
  cache.set(pattern, compiled);
  return compiled;
}

/** Null when `pattern` is usable, else why not (a phrase: "is not a valid regular expression (...)"). */
export function tenantPatternProblem(pattern: unknown): string | null {
  try {
    if (typeof pattern === 'string') compileTenantPattern(pattern);
    else compile(pattern);
    return null;
  } catch (e) {
    if (e instanceof TenantPatternError) return e.message;
    throw e;
  }
}
