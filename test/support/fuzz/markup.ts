/**
 * Mutated call-control markup (RCML/TwiML) for the markup fuzz suite and the combined "one process keeps
 * serving" test. Deterministic per seed (mulberry32); every case carries at least one defect that the
 * service must report as a Notification (unknown verb or attribute, bad attribute value, misplaced
 * verb, stray or huge text → 12200; deep nesting, NUL and other control characters, bad encodings,
 * truncation, wrong root, DOCTYPE → 12100; over 1 MiB → 11750; wrong Content-Type → 12300).
 *
 * The valid parts use only quick verbs (Pause 0-1 s, a short Say, a 1 s Gather, Hangup, Reject), so a
 * case that still runs ends within seconds on a real call.
 */
import { prng } from './prng.js';

export const MarkupMutation = {
  UnknownVerb: 'unknown-verb',
  BadAttribute: 'bad-attribute',
  UnknownAttribute: 'unknown-attribute',
  Misplaced: 'misplaced-verb',
  DeepNesting: 'deep-nesting',
  HugeText: 'huge-text',
  ControlCharacter: 'control-character',
  BadEncoding: 'bad-encoding',
  Truncated: 'truncated',
  WrongRoot: 'wrong-root',
  Doctype: 'doctype',
  Garbage: 'garbage',
  ContentType: 'content-type',
  TooLarge: 'too-large',
} as const;
export type MarkupMutation = (typeof MarkupMutation)[keyof typeof MarkupMutation];

/** Notification codes that report a markup problem (docs/markup.md, docs/webhooks.md). */
export const MARKUP_NOTIFICATION_CODES: readonly number[] = [11750, 12100, 12200, 12300];

export interface MarkupCase {
  readonly seed: number;
  readonly index: number;
  readonly mutations: readonly MarkupMutation[];
  /** The bytes to serve. */
  readonly body: Buffer;
  readonly contentType: string;
}

export interface MarkupCaseOptions {
  /** Leave out mutations (e.g. `too-large` where a 1 MiB body per case is too slow). */
  readonly exclude?: readonly MarkupMutation[];
  /** Cap on generated text (huge text, garbage); default 256 KiB. */
  readonly maxTextBytes?: number;
}

type Rng = () => number;
const int = (rng: Rng, lo: number, hi: number) => lo + Math.floor(rng() * (hi - lo + 1));
const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)] as T;

const BASE_VERBS = [
  '<Pause length="0"/>',
  '<Pause length="1"/>',
  '<Say>ok</Say>',
  '<Gather timeout="1" numDigits="1"><Pause length="0"/></Gather>',
  '<Hangup/>',
  '<Reject reason="busy"/>',
  '<Reject/>',
];
const UNKNOWN_VERBS = [
  'Foo',
  'say',
  'SAY',
  'Queue',
  'Enqueue',
  'Connect',
  'Message',
  'Leave',
  'x-y',
  'Résumé',
];
const BAD_ATTRIBUTES = [
  '<Pause length="abc"/>',
  '<Pause length="-5"/>',
  '<Pause length="601"/>',
  '<Pause length="1e400"/>',
  '<Pause length="0x10"/>',
  '<Say loop="many">ok</Say>',
  '<Say voice="robot 9000!">ok</Say>',
  '<Gather numDigits="0" timeout="1"><Pause length="0"/></Gather>',
  '<Gather timeout="forever" numDigits="1"/>',
  '<Reject reason="because"/>',
];
const MISPLACED = [
  '<Number>+15550001111</Number>',
  '<Conference>room</Conference>',
  '<Client>alice</Client>',
  '<Gather timeout="1"><Hangup/></Gather>',
  '<Gather timeout="1"><Gather timeout="1"/></Gather>',
];
/** XML 1.0 forbids these anywhere in a document (§2.2). */
const CONTROL = [
  '\u0000',
  '\u0001',
  '\u0007',
  '\u0008',
  '\u000b',
  '\u000c',
  '\u001b',
  '\u001f',
  '\ufffe',
  '\uffff',
];
/** Mutations that leave a well-formed document: it runs, with 12200 warnings. */
export const STRUCTURAL_MUTATIONS: readonly MarkupMutation[] = [
  MarkupMutation.UnknownVerb,
  MarkupMutation.BadAttribute,
  MarkupMutation.UnknownAttribute,
  MarkupMutation.Misplaced,
  MarkupMutation.DeepNesting,
  MarkupMutation.HugeText,
];
/** Mutations of the bytes or the response: the document is refused (12100, 11750, 12300). */
export const SERIAL_MUTATIONS: readonly MarkupMutation[] = [
  MarkupMutation.ControlCharacter,
  MarkupMutation.BadEncoding,
  MarkupMutation.Truncated,
  MarkupMutation.WrongRoot,
  MarkupMutation.Doctype,
  MarkupMutation.Garbage,
  MarkupMutation.ContentType,
  MarkupMutation.TooLarge,
];

function words(rng: Rng, bytes: number): string {
  const parts: string[] = [];
  let n = 0;
  while (n < bytes) {
    const w = pick(rng, ['lorem', 'ipsum', 'dolor', '&amp;', '&lt;tag&gt;', 'ünï', '日本', '😀', '\t', '\n']);
    parts.push(w);
    n += Buffer.byteLength(w) + 1;
  }
  return parts.join(' ');
}

/** One case: 1-3 mutations, at least one of which is a defect by construction. */
export function markupCase(seed: number, index: number, options: MarkupCaseOptions = {}): MarkupCase {
  const rng = prng((seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
  const excluded = new Set(options.exclude ?? []);
  const maxText = options.maxTextBytes ?? 256 * 1024;
  const structural = STRUCTURAL_MUTATIONS.filter((m) => !excluded.has(m));
  const serial = SERIAL_MUTATIONS.filter((m) => !excluded.has(m));
  const all = [...structural, ...serial];
  const chosen = new Set<MarkupMutation>([pick(rng, all)]);
  for (let extra = int(rng, 0, 2); extra > 0; extra--) chosen.add(pick(rng, all));
  const mutations = [...chosen];

  const elements: string[] = [];
  for (let i = int(rng, 1, 3); i > 0; i--) elements.push(pick(rng, BASE_VERBS));
  const insert = (el: string) => elements.splice(int(rng, 0, elements.length), 0, el);
  let stray = '';
  let verbName: string | null = null;
  for (const m of mutations) {
    switch (m) {
      case MarkupMutation.UnknownVerb: {
        const name = pick(rng, UNKNOWN_VERBS);
        insert(rng() < 0.5 ? `<${name}/>` : `<${name} loop="2">text<Pause/></${name}>`);
        break;
      }
      case MarkupMutation.BadAttribute:
        insert(pick(rng, BAD_ATTRIBUTES));
        break;
      case MarkupMutation.UnknownAttribute:
        insert(
          pick(rng, ['<Hangup foo="bar"/>', '<Pause length="0" volume="11"/>', '<Say x:y="1">ok</Say>']),
        );
        break;
      case MarkupMutation.Misplaced:
        insert(pick(rng, MISPLACED));
        break;
      case MarkupMutation.DeepNesting: {
        const depth = pick(rng, [17, 40, 200, 5_000]);
        const name = pick(rng, ['Gather', 'Foo', 'Dial']);
        insert(`<${name}>`.repeat(depth) + `</${name}>`.repeat(depth));
        break;
      }
      case MarkupMutation.HugeText:
        stray = words(rng, int(rng, 1024, maxText));
        break;
      case MarkupMutation.BadEncoding:
        // Latin-1 bytes in an element name: UTF-8 decoding turns them into U+FFFD, an unknown verb.
        verbName = `Sa\u00ff\u00e9y`;
        insert(`<${verbName}>ok</${verbName}>`);
        break;
      default:
        break;
    }
  }
  const root = chosen.has(MarkupMutation.WrongRoot)
    ? pick(rng, ['response', 'Reponse', 'RESPONSE', 'Say'])
    : 'Response';
  const prolog = chosen.has(MarkupMutation.Doctype)
    ? pick(rng, [
        '<!DOCTYPE Response [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>',
        '<!DOCTYPE Response SYSTEM "file:///etc/passwd">',
        '<!DOCTYPE Response>',
      ])
    : '';
  let text = `<?xml version="1.0" encoding="UTF-8"?>${prolog}<${root}>${stray}${elements.join('')}</${root}>`;
  if (chosen.has(MarkupMutation.ControlCharacter)) {
    for (let i = int(rng, 1, 3); i > 0; i--) {
      const at = int(rng, 0, text.length);
      text = text.slice(0, at) + pick(rng, CONTROL) + text.slice(at);
    }
  }
  if (chosen.has(MarkupMutation.Truncated)) text = text.slice(0, int(rng, 0, text.length - 1));
  let body: Buffer;
  if (chosen.has(MarkupMutation.Garbage)) {
    body = Buffer.alloc(int(rng, 1, Math.min(maxText, 64 * 1024)));
    for (let i = 0; i < body.length; i++) body[i] = int(rng, 0, 255);
    // Keep the defect even when the bytes happen to look like a document.
    body[0] = 0;
  } else if (chosen.has(MarkupMutation.BadEncoding) && rng() < 0.5) {
    // The whole document as UTF-16 with a BOM, served without saying so.
    body = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
  } else if (verbName) {
    // Only the element name is meant to be bad: the rest stays UTF-8.
    const bad = Buffer.from(verbName, 'latin1');
    const parts = text.split(verbName).map((part) => Buffer.from(part, 'utf8'));
    body = Buffer.concat(parts.flatMap((part, i) => (i === 0 ? [part] : [bad, part])));
  } else body = Buffer.from(text, 'utf8');
  if (chosen.has(MarkupMutation.TooLarge)) body = Buffer.concat([body, Buffer.alloc(1024 * 1024 + 1, 0x20)]);
  const contentType = chosen.has(MarkupMutation.ContentType)
    ? pick(rng, ['application/json', 'image/png', 'audio/wav', 'application/octet-stream'])
    : 'text/xml; charset=utf-8';
  return { seed, index, mutations, body, contentType };
}

/** `count` cases of `seed`. */
export function markupCases(seed: number, count: number, options: MarkupCaseOptions = {}): MarkupCase[] {
  return Array.from({ length: count }, (_, i) => markupCase(seed, i, options));
}

/** A short description for failure messages (seed, index, mutations, the first bytes). */
export function describeCase(c: MarkupCase): string {
  let head = '';
  for (const ch of c.body.subarray(0, 160).toString('utf8')) {
    const code = ch.codePointAt(0) ?? 0;
    head += code < 0x20 ? `\\x${code.toString(16).padStart(2, '0')}` : ch;
  }
  return `seed=${c.seed} index=${c.index} mutations=${c.mutations.join(',')} type=${c.contentType} bytes=${c.body.length} head=${JSON.stringify(head)}`;
}
