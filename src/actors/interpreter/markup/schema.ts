/**
 * Attribute and verb schema primitives for call-control markup (Restcomm RCML / Twilio TwiML,
 * https://www.twilio.com/docs/voice/twiml). Each verb file under `verbs/` declares its attributes with
 * these specs; the parser coerces raw attribute strings with `coerceAttribute`.
 */
import { AddressError, AddressKind, parseAddress } from '../../../numbers/address.js';

/** How one attribute is validated and what it defaults to. */
export type AttrSpec =
  | {
      readonly type: 'string';
      readonly default: string | null;
      readonly pattern?: RegExp;
      readonly maxLength?: number;
    }
  | { readonly type: 'url'; readonly default: string | null }
  | { readonly type: 'method'; readonly default: 'GET' | 'POST' }
  | { readonly type: 'integer'; readonly default: number | null; readonly min: number; readonly max: number }
  | { readonly type: 'boolean'; readonly default: boolean }
  | {
      readonly type: 'enum';
      readonly values: readonly string[];
      readonly default: string | null;
      /** Accepted spellings mapped onto a canonical value (e.g. Restcomm `record="true"`). */
      readonly aliases?: Readonly<Record<string, string>>;
    }
  /** DTMF keys from `chars`; an empty string is meaningful (no key). */
  | { readonly type: 'keys'; readonly default: string; readonly chars: string; readonly maxLength: number }
  /** DTMF digits to send/play: 0-9 * # and `w` (half-second wait). */
  | { readonly type: 'digits'; readonly default: string | null };

export type AttrMap = Readonly<Record<string, AttrSpec>>;

/** A validated attribute value: JSON-serialisable. */
export type AttrValue = string | number | boolean | null;

/** The TypeScript type of a validated attribute, inferred from its spec. */
export type ValueOf<S extends AttrSpec> = S extends { type: 'integer' }
  ? S['default'] extends null
    ? number | null
    : number
  : S extends { type: 'boolean' }
    ? boolean
    : S extends { type: 'method' }
      ? 'GET' | 'POST'
      : S extends { type: 'enum'; values: readonly (infer V)[] }
        ? S['default'] extends null
          ? V | null
          : V
        : S['default'] extends null
          ? string | null
          : string;

/** Validated attributes of a verb, inferred from its attribute map. */
export type AttrsOf<M extends AttrMap> = { -readonly [K in keyof M]: ValueOf<M[K]> };

/** What a verb's text content must look like. */
export interface TextSpec {
  readonly required: boolean;
  readonly kind: 'plain' | 'url' | 'number' | 'identifier' | 'sip-uri';
}

export interface VerbSchema {
  /** Element name as written in the markup (case-sensitive, as TwiML/RCML). */
  readonly name: string;
  readonly attrs: AttrMap;
  /** Text content rules; null = no text expected (text is ignored). */
  readonly text: TextSpec | null;
  /** Names of nested verbs/nouns allowed inside. */
  readonly children: readonly string[];
  /** Extra whole-element rule; returns why the element cannot be executed, or null. */
  readonly check?: (node: {
    attrs: Record<string, AttrValue>;
    text: string | null;
    children: readonly unknown[];
  }) => string | null;
}

const DIGITS = /^[0-9*#wW]+$/;
const URL_BASE = 'http://relative.invalid/';

/** Coerces a raw attribute string; `undefined` result means invalid (caller applies the default). */
export function coerceAttribute(spec: AttrSpec, raw: string): { value: AttrValue } | undefined {
  const trimmed = raw.trim();
  switch (spec.type) {
    case 'string': {
      if (spec.maxLength !== undefined && raw.length > spec.maxLength) return undefined;
      if (spec.pattern && !spec.pattern.test(trimmed)) return undefined;
      return { value: trimmed };
    }
    case 'url': {
      if (trimmed === '' || /\s/.test(trimmed) || trimmed.length > 4096) return undefined;
      try {
        const u = new URL(trimmed, URL_BASE);
        if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
      } catch {
        return undefined;
      }
      // Relative URLs are kept as written; the interpreter resolves them against the document URL.
      return { value: trimmed };
    }
    case 'method': {
      const m = trimmed.toUpperCase();
      return m === 'GET' || m === 'POST' ? { value: m } : undefined;
    }
    case 'integer': {
      if (!/^[+-]?\d{1,9}$/.test(trimmed)) return undefined;
      const n = Number(trimmed);
      return n >= spec.min && n <= spec.max ? { value: n } : undefined;
    }
    case 'boolean': {
      const b = trimmed.toLowerCase();
      return b === 'true' ? { value: true } : b === 'false' ? { value: false } : undefined;
    }
    case 'enum': {
      const exact = spec.values.find((v) => v.toLowerCase() === trimmed.toLowerCase());
      if (exact !== undefined) return { value: exact };
      const alias = spec.aliases?.[trimmed.toLowerCase()];
      return alias !== undefined ? { value: alias } : undefined;
    }
    case 'keys': {
      if (trimmed.length > spec.maxLength) return undefined;
      for (const ch of trimmed) if (!spec.chars.includes(ch)) return undefined;
      return { value: trimmed };
    }
    case 'digits':
      return DIGITS.test(trimmed) ? { value: trimmed } : undefined;
  }
}

const IDENTIFIER_TEXT = /^[A-Za-z0-9_.@+:-]{1,128}$/;
const SIP_URI_MAX = 1024;
const NUMBER_FORMS = [AddressKind.E164, AddressKind.ShortCode, AddressKind.Digits];

/**
 * A `<Number>` or `<Sip>` target is what the SIP routing policy will dial, read by the same parser
 * (src/numbers/address.ts): a number it refuses is skipped here rather than failing the leg later.
 */
function isDialable(text: string, accept: readonly AddressKind[]): boolean {
  try {
    parseAddress(text, { field: 'text', accept });
    return true;
  } catch (e) {
    if (e instanceof AddressError) return false;
    throw e;
  }
}

/** Validates a verb's text; returns the reason it is unusable, or null. */
export function checkText(spec: TextSpec, text: string): string | null {
  switch (spec.kind) {
    case 'plain':
      return null;
    case 'url':
      return coerceAttribute({ type: 'url', default: null }, text) ? null : 'not an http(s) URL';
    case 'number':
      return isDialable(text, NUMBER_FORMS) ? null : 'not a phone number';
    case 'identifier':
      return IDENTIFIER_TEXT.test(text) ? null : 'not a valid client name';
    case 'sip-uri':
      return text.length <= SIP_URI_MAX && isDialable(text, [AddressKind.Sip])
        ? null
        : 'not a sip: or sips: URI';
  }
}

/** Shared attribute specs. */
export const Common = {
  action: { type: 'url', default: null },
  method: { type: 'method', default: 'POST' },
  url: { type: 'url', default: null },
  loop: { type: 'integer', default: 1, min: 0, max: 1000 },
} as const satisfies AttrMap;
