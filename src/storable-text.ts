/**
 * Text received from a customer's server (a response body, a header value, a parser message quoting
 * it) as a Notification may keep it. Postgres `text` cannot hold NUL and the store refuses unpaired
 * UTF-16 surrogates, so a response carrying either would otherwise lose the very Notification that
 * explains it. NUL becomes U+2400 (␀) so the reader still sees where it was; an unpaired surrogate
 * becomes U+FFFD, as a UTF-8 decoder would have made it.
 */

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** `text` with NUL shown as ␀ and unpaired surrogates as U+FFFD; the same string when clean. */
export function storableText(text: string): string {
  return text.replaceAll('\u0000', '\u2400').replace(LONE_SURROGATE, '\uFFFD');
}

/** `storableText` over every name and value of a header map. */
export function storableHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) out[storableText(k)] = storableText(v);
  return out;
}
