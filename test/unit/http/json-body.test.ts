import { describe, expect, it } from 'vitest';
import { AppError } from '../../../src/errors.js';
import { JSON_MAX_DEPTH, jsonDepth, parseJsonSafely } from '../../../src/http/json-body.js';

describe('jsonDepth', () => {
  it('counts object and array nesting, ignoring brackets inside strings and escaped quotes', () => {
    expect(jsonDepth('1')).toBe(0);
    expect(jsonDepth('{"a":[1,{"b":[]}]}')).toBe(4);
    expect(jsonDepth('{"a":"[[[[{{{{"}')).toBe(1);
    expect(jsonDepth('{"a":"\\"[[[["}')).toBe(1);
  });

  it('stops counting past the limit (linear, no recursion)', () => {
    const deep = '['.repeat(1_000_000);
    expect(jsonDepth(deep)).toBe(JSON_MAX_DEPTH + 1);
  });
});

describe('parseJsonSafely', () => {
  const code = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      return (e as AppError).code;
    }
    return null;
  };

  it('parses ordinary documents, surrogate pairs included', () => {
    expect(parseJsonSafely('{"a":["\\ud83d\\ude00"]}', 'Request body')).toEqual({ a: ['\u{1F600}'] });
  });

  it('21102 for depth over the cap and for invalid JSON; 21100 naming the member for NUL and lone surrogates', () => {
    expect(
      code(() =>
        parseJsonSafely(`${'['.repeat(JSON_MAX_DEPTH + 1)}${']'.repeat(JSON_MAX_DEPTH + 1)}`, 'Request body'),
      ),
    ).toBe(21102);
    expect(
      code(() =>
        parseJsonSafely(`${'['.repeat(JSON_MAX_DEPTH)}${']'.repeat(JSON_MAX_DEPTH)}`, 'Request body'),
      ),
    ).toBeNull();
    expect(code(() => parseJsonSafely('{oops', 'Request body'))).toBe(21102);
    expect(() => parseJsonSafely('{"a":{"b":["x","\\u0000"]}}', 'Request body')).toThrow(
      /\/a\/b\/1 must not contain NUL/,
    );
    expect(() => parseJsonSafely('{"a":"\\udc00x"}', 'Request body')).toThrow(
      /\/a must be well-formed Unicode/,
    );
    expect(() => parseJsonSafely('{"a":"x\\ud800"}', 'Request body')).toThrow(AppError);
  });
});
