/**
 * Safe parser for call-control markup (RCML/TwiML) into a JSON-serialisable program.
 *
 * Safety (benchmarks-and-faults R4): saxes never expands entities beyond the five predefined XML
 * entities and character references, and never fetches anything; a DOCTYPE is refused outright, so
 * "billion laughs" and external-entity payloads fail before any entity is declared. Input is capped in
 * bytes (default 1 MiB), nesting depth and element count.
 *
 * Outcomes: a document that is not well-formed, too large, empty, carries a DOCTYPE or has a root other
 * than `<Response>` is a fatal error (12100, or 11750 for size). Everything else parses; schema problems
 * become diagnostics (12200) with a defined outcome so the interpreter can write Notifications:
 * - unknown verb or noun → element skipped;
 * - verb not allowed where it appears (nesting, SMS mode) → element skipped;
 * - bad attribute value → the attribute's default is used;
 * - unknown attribute → ignored;
 * - missing or invalid required text / element rule broken → element skipped.
 */
import { SaxesParser } from 'saxes';
import { type AttrValue, checkText, coerceAttribute, type VerbSchema } from './schema.js';
import { SAY_SSML_ELEMENTS, SCHEMAS, SMS_VERBS, USSD_VERBS, VOICE_VERBS } from './verbs/index.js';

/** Error codes (Twilio catalogue): https://www.twilio.com/docs/api/errors */
export const MarkupErrorCode = {
  /** 11750 Response body too large. */
  TooLarge: 11750,
  /** 12100 Document parse failure. */
  ParseFailure: 12100,
  /** 12200 Schema validation warning. */
  SchemaWarning: 12200,
} as const;
export type MarkupErrorCode = (typeof MarkupErrorCode)[keyof typeof MarkupErrorCode];

/** Machine-readable reason of a diagnostic. */
export type DiagnosticReason =
  | 'too-large'
  | 'malformed'
  | 'doctype'
  | 'empty'
  | 'wrong-root'
  | 'too-deep'
  | 'too-many-elements'
  | 'unknown-verb'
  | 'misplaced-verb'
  | 'unknown-attribute'
  | 'bad-attribute'
  | 'bad-text'
  | 'stray-text'
  | 'invalid-verb';

export interface Diagnostic {
  readonly code: MarkupErrorCode;
  readonly level: 'error' | 'warning';
  readonly reason: DiagnosticReason;
  readonly message: string;
  /** Element concerned (null for document-level problems). */
  readonly verb: string | null;
  readonly attribute: string | null;
  /** 1-based source line, when known. */
  readonly line: number | null;
  /** What the parser did about it. */
  readonly outcome: 'document-rejected' | 'skipped' | 'default-used' | 'ignored';
}

/** One verb or noun of the program: plain JSON. */
export interface VerbNode {
  readonly verb: string;
  readonly attrs: Readonly<Record<string, AttrValue>>;
  readonly children: readonly VerbNode[];
  /** Trimmed text content; null when empty. */
  readonly text: string | null;
}

export type ParseResult =
  | { readonly ok: true; readonly program: readonly VerbNode[]; readonly diagnostics: readonly Diagnostic[] }
  | { readonly ok: false; readonly error: Diagnostic; readonly diagnostics: readonly Diagnostic[] };

export interface ParseOptions {
  /** `voice` (default), `sms` (only Sms, Redirect, Email allowed) or `ussd` (USSD verbs only). */
  readonly mode?: 'voice' | 'sms' | 'ussd';
  /** Byte cap of the document. Default 1 MiB. */
  readonly maxBytes?: number;
  /** Maximum element nesting depth. Default 16. */
  readonly maxDepth?: number;
  /** Maximum number of elements. Default 10,000. */
  readonly maxElements?: number;
}

interface RawElement {
  readonly name: string;
  readonly attributes: Record<string, string>;
  readonly children: RawElement[];
  text: string;
  readonly line: number;
  /** For SSML inside `<Say>`: the Say element that receives this element's text. */
  readonly sink?: RawElement;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

class Fatal extends Error {
  constructor(
    readonly reason: DiagnosticReason,
    message: string,
    readonly line: number | null,
  ) {
    super(message);
  }
}

function fatal(
  code: MarkupErrorCode,
  reason: DiagnosticReason,
  message: string,
  line: number | null,
): ParseResult {
  const error: Diagnostic = {
    code,
    level: 'error',
    reason,
    message,
    verb: null,
    attribute: null,
    line,
    outcome: 'document-rejected',
  };
  return { ok: false, error, diagnostics: [error] };
}

function readTree(xml: string, maxDepth: number, maxElements: number): RawElement {
  const parser = new SaxesParser({ xmlns: false, position: true });
  const stack: RawElement[] = [];
  let root: RawElement | null = null;
  let count = 0;
  parser.on('error', (err) => {
    throw new Fatal('malformed', err.message, parser.line);
  });
  parser.on('doctype', () => {
    throw new Fatal('doctype', 'DOCTYPE declarations are not allowed', parser.line);
  });
  parser.on('opentag', (tag) => {
    count += 1;
    if (count > maxElements)
      throw new Fatal('too-many-elements', `more than ${maxElements} elements`, parser.line);
    if (stack.length >= maxDepth) throw new Fatal('too-deep', `nesting deeper than ${maxDepth}`, parser.line);
    const attributes: Record<string, string> = {};
    for (const [k, v] of Object.entries(tag.attributes)) attributes[k] = String(v);
    const parent = stack[stack.length - 1];
    // SSML inside <Say> is flattened into the Say's text, word boundaries kept (TwiML allows SSML there).
    const sayAncestor = parent?.name === 'Say' ? parent : parent?.sink;
    if (sayAncestor && SAY_SSML_ELEMENTS.includes(tag.name)) {
      sayAncestor.text += ' ';
      const inline: RawElement = {
        name: tag.name,
        attributes,
        children: [],
        text: '',
        line: parser.line,
        sink: sayAncestor,
      };
      stack.push(inline);
      return;
    }
    const el: RawElement = { name: tag.name, attributes, children: [], text: '', line: parser.line };
    if (parent) parent.children.push(el);
    else root = el;
    stack.push(el);
  });
  parser.on('closetag', () => {
    const el = stack.pop();
    if (el?.sink) el.sink.text += ' ';
  });
  const onText = (t: string) => {
    const top = stack[stack.length - 1];
    if (top) (top.sink ?? top).text += t;
  };
  parser.on('text', onText);
  parser.on('cdata', onText);
  parser.write(xml).close();
  if (!root) throw new Fatal('empty', 'document has no root element', null);
  return root;
}

/** Parses markup text. Never throws: every problem is a result or a diagnostic. */
export function parseMarkup(input: string | Uint8Array, options: ParseOptions = {}): ParseResult {
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  const size = typeof input === 'string' ? Buffer.byteLength(input, 'utf8') : input.byteLength;
  if (size > maxBytes) {
    return fatal(
      MarkupErrorCode.TooLarge,
      'too-large',
      `document of ${size} bytes exceeds ${maxBytes}`,
      null,
    );
  }
  const xml = typeof input === 'string' ? input : Buffer.from(input).toString('utf8');
  if (xml.trim() === '') return fatal(MarkupErrorCode.ParseFailure, 'empty', 'empty document', null);
  // saxes checks XML characters on code units, so an unpaired surrogate (only possible in a string
  // handed in directly; UTF-8 decoding replaces them) would otherwise reach verb text and the store.
  if (LONE_SURROGATE.test(xml)) {
    return fatal(
      MarkupErrorCode.ParseFailure,
      'malformed',
      'unpaired UTF-16 surrogate in the document',
      null,
    );
  }
  let root: RawElement;
  try {
    root = readTree(xml, options.maxDepth ?? 16, options.maxElements ?? 10_000);
  } catch (err) {
    if (err instanceof Fatal) return fatal(MarkupErrorCode.ParseFailure, err.reason, err.message, err.line);
    return fatal(
      MarkupErrorCode.ParseFailure,
      'malformed',
      err instanceof Error ? err.message : String(err),
      null,
    );
  }
  if (root.name !== 'Response') {
    return fatal(
      MarkupErrorCode.ParseFailure,
      'wrong-root',
      `root element must be <Response>, not <${root.name}>`,
      root.line,
    );
  }
  const diagnostics: Diagnostic[] = [];
  const topLevel = options.mode === 'sms' ? SMS_VERBS : options.mode === 'ussd' ? USSD_VERBS : VOICE_VERBS;
  if (root.text.trim() !== '') {
    diagnostics.push(
      warn(
        'stray-text',
        'text directly inside <Response> is ignored',
        'Response',
        null,
        root.line,
        'ignored',
      ),
    );
  }
  const program = buildList(root.children, topLevel, 'Response', options.mode ?? 'voice', diagnostics);
  return { ok: true, program, diagnostics };
}

function warn(
  reason: DiagnosticReason,
  message: string,
  verb: string | null,
  attribute: string | null,
  line: number,
  outcome: Diagnostic['outcome'],
): Diagnostic {
  return {
    code: MarkupErrorCode.SchemaWarning,
    level: 'warning',
    reason,
    message,
    verb,
    attribute,
    line,
    outcome,
  };
}

function buildList(
  elements: readonly RawElement[],
  allowed: readonly string[],
  parent: string,
  mode: 'voice' | 'sms' | 'ussd',
  diagnostics: Diagnostic[],
): VerbNode[] {
  const out: VerbNode[] = [];
  for (const el of elements) {
    const schema = SCHEMAS.get(el.name);
    if (!schema) {
      diagnostics.push(
        warn('unknown-verb', `unknown verb <${el.name}> skipped`, el.name, null, el.line, 'skipped'),
      );
      continue;
    }
    if (!allowed.includes(el.name)) {
      const where =
        parent === 'Response' && mode !== 'voice' ? `in ${mode.toUpperCase()} markup` : `inside <${parent}>`;
      diagnostics.push(
        warn(
          'misplaced-verb',
          `<${el.name}> is not allowed ${where}; skipped`,
          el.name,
          null,
          el.line,
          'skipped',
        ),
      );
      continue;
    }
    const node = buildVerb(el, schema, mode, diagnostics);
    if (node) out.push(node);
  }
  return out;
}

function buildVerb(
  el: RawElement,
  schema: VerbSchema,
  mode: 'voice' | 'sms' | 'ussd',
  diagnostics: Diagnostic[],
): VerbNode | null {
  const attrs: Record<string, AttrValue> = {};
  for (const [name, spec] of Object.entries(schema.attrs)) {
    const raw = Object.hasOwn(el.attributes, name) ? el.attributes[name] : undefined;
    if (raw === undefined || (raw.trim() === '' && spec.type !== 'keys' && spec.type !== 'string')) {
      attrs[name] = spec.default;
      continue;
    }
    const coerced = coerceAttribute(spec, raw);
    if (coerced) attrs[name] = coerced.value;
    else {
      attrs[name] = spec.default;
      diagnostics.push(
        warn(
          'bad-attribute',
          `<${el.name}> ${name}="${raw.slice(0, 64)}" is invalid; default ${JSON.stringify(spec.default)} used`,
          el.name,
          name,
          el.line,
          'default-used',
        ),
      );
    }
  }
  for (const name of Object.keys(el.attributes)) {
    if (!Object.hasOwn(schema.attrs, name)) {
      diagnostics.push(
        warn(
          'unknown-attribute',
          `<${el.name}> attribute ${name} is not supported; ignored`,
          el.name,
          name,
          el.line,
          'ignored',
        ),
      );
    }
  }
  const children = buildList(el.children, schema.children, el.name, mode, diagnostics);
  // Say text collapses whitespace runs (SSML flattening adds boundaries); other text is only trimmed.
  const trimmed = schema.name === 'Say' ? el.text.replace(/\s+/g, ' ').trim() : el.text.trim();
  let text: string | null = trimmed === '' || schema.text === null ? null : trimmed;
  if (schema.text) {
    // Dial's bare text is ignored when nouns are nested, as Twilio does.
    if (schema.name === 'Dial' && children.length > 0) text = null;
    if (text === null && schema.text.required) {
      diagnostics.push(
        warn('bad-text', `<${el.name}> needs text content; skipped`, el.name, null, el.line, 'skipped'),
      );
      return null;
    }
    if (text !== null) {
      const problem = checkText(schema.text, text);
      if (problem) {
        diagnostics.push(
          warn(
            'bad-text',
            `<${el.name}> text ${JSON.stringify(text.slice(0, 64))} is ${problem}; skipped`,
            el.name,
            null,
            el.line,
            'skipped',
          ),
        );
        return null;
      }
    }
  }
  const node: VerbNode = { verb: el.name, attrs, children, text };
  const problem = schema.check?.(node);
  if (problem) {
    diagnostics.push(
      warn('invalid-verb', `<${el.name}> ${problem}; skipped`, el.name, null, el.line, 'skipped'),
    );
    return null;
  }
  return node;
}
