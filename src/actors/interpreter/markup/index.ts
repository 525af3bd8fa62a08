/** Call-control markup: the safe parser and per-verb schemas. See docs/markup.md. */
export {
  type Diagnostic,
  type DiagnosticReason,
  MarkupErrorCode,
  type ParseOptions,
  type ParseResult,
  parseMarkup,
  type VerbNode,
} from './parser.js';
export * from './schema.js';
export * from './verbs/index.js';
