/**
 * Searching for purchasable numbers: what a search asks (country, kind, area code, a `Contains`
 * pattern, region) and how a candidate is described (country, kind). The provider decides which
 * numbers exist; this module decides whether one matches, in time linear in the number's length.
 */
import {
  getCountries,
  getCountryCallingCode,
  isSupportedCountry,
  parsePhoneNumberFromString,
} from 'libphonenumber-js/max';

/** The three purchasable kinds, as the Local, TollFree and Mobile resources name them. */
export type NumberKind = 'local' | 'tollfree' | 'mobile';

export interface NumberSearch {
  /** ISO 3166-1 alpha-2, upper case. */
  readonly country: string;
  readonly kind: NumberKind;
  /** Three-digit NANP area code. */
  readonly areaCode?: string | undefined;
  /** Digits, letters (keypad) and `*` (any one digit), matched anywhere in the number's digits. */
  readonly contains?: string | undefined;
  /** Region label (a US state, say) as the provider knows it, compared case-insensitively. */
  readonly inRegion?: string | undefined;
  readonly limit: number;
}

export interface AvailableNumber {
  readonly phoneNumber: string;
  readonly isoCountry: string;
  readonly region: string | null;
  readonly kind: NumberKind;
}

/** True when the country is one whose numbering plan is known. */
export function isKnownCountry(iso: string): boolean {
  return /^[A-Z]{2}$/.test(iso) && isSupportedCountry(iso);
}

/** The country calling code of an ISO country (`US` → `1`). */
export function callingCodeOf(iso: string): string {
  return getCountryCallingCode(iso as Parameters<typeof getCountryCallingCode>[0]);
}

const KEYPAD: Record<string, string> = {};
for (const [digit, letters] of Object.entries({
  2: 'ABC',
  3: 'DEF',
  4: 'GHI',
  5: 'JKL',
  6: 'MNO',
  7: 'PQRS',
  8: 'TUV',
  9: 'WXYZ',
})) {
  for (const l of letters) KEYPAD[l] = digit;
}

/** Contains as digits and `*`, or null when it holds anything else (or is over 16 long). */
export function normalizeContains(pattern: string): string | null {
  const upper = pattern.toUpperCase();
  if (upper.length === 0 || upper.length > 16 || !/^[0-9A-Z*]+$/.test(upper)) return null;
  return [...upper].map((c) => KEYPAD[c] ?? c).join('');
}

/**
 * True when `pattern` (digits and `*`) occurs in `digits`. Both are at most a few tens of
 * characters and the loop has no backtracking beyond one window: linear for practical purposes.
 */
export function containsMatch(digits: string, pattern: string): boolean {
  outer: for (let start = 0; start + pattern.length <= digits.length; start++) {
    for (let i = 0; i < pattern.length; i++) {
      const p = pattern.charCodeAt(i);
      if (p !== 42 /* * */ && p !== digits.charCodeAt(start + i)) continue outer;
    }
    return true;
  }
  return false;
}

interface Described {
  /** Null when the number is not valid in its plan (fictional 555 exchanges): only its code is known. */
  readonly country: string | null;
  readonly callingCode: string | null;
  readonly kind: NumberKind;
}

const TOLL_FREE_NANP = new Set(['800', '833', '844', '855', '866', '877', '888']);
const described = new Map<string, Described>();
const DESCRIBED_MAX = 4096;

/**
 * Country and kind of a number. Both follow from the leading digits, so the answer is remembered by
 * the number without its last four digits (one parse per block of 10,000 candidates).
 */
export function describeNumber(e164: string): Described {
  const key = e164.slice(0, -4);
  const known = described.get(key);
  if (known) return known;
  const parsed = parsePhoneNumberFromString(e164);
  let kind: NumberKind = 'local';
  const type = parsed?.isValid() ? parsed.getType() : undefined;
  if (type === 'TOLL_FREE' || (e164.startsWith('+1') && TOLL_FREE_NANP.has(e164.slice(2, 5))))
    kind = 'tollfree';
  else if (type === 'MOBILE') kind = 'mobile';
  const out = { country: parsed?.country ?? null, callingCode: parsed?.countryCallingCode ?? null, kind };
  if (described.size >= DESCRIBED_MAX) described.clear();
  described.set(key, out);
  return out;
}

/** True when a candidate satisfies every criterion of the search except ownership. */
export function matches(e164: string, region: string | null, search: NumberSearch): boolean {
  if (search.areaCode !== undefined && !e164.startsWith(`+1${search.areaCode}`)) return false;
  if (search.inRegion !== undefined && region?.toUpperCase() !== search.inRegion.toUpperCase()) return false;
  if (search.contains !== undefined && !containsMatch(e164.slice(1), search.contains)) return false;
  const d = describeNumber(e164);
  if (d.kind !== search.kind) return false;
  // A number its plan does not validate (fictional NANP 555 exchanges, say) matches any country that
  // shares its calling code: the pool's operator put it there on purpose.
  return d.country !== null ? d.country === search.country : d.callingCode === callingCodeOf(search.country);
}

/** Where a calling code's numbers are listed when the number itself names no country. */
const MAIN_COUNTRY: Record<string, string> = { '1': 'US', '7': 'RU' };

/** The country a pool number is offered under: its own, or its calling code's main country. */
export function countryOfNumber(e164: string): string | null {
  const d = describeNumber(e164);
  if (d.country !== null) return d.country;
  if (d.callingCode === null) return null;
  return (
    MAIN_COUNTRY[d.callingCode] ??
    getCountries().find((c) => getCountryCallingCode(c) === d.callingCode) ??
    null
  );
}
