import { describe, expect, it } from 'vitest';
import { storableHeaders, storableText } from '../../src/storable-text.js';

describe('storableText', () => {
  it('shows NUL as ␀ and unpaired surrogates as U+FFFD; keeps pairs and clean text', () => {
    expect(storableText('a\u0000b\u0000')).toBe('a\u2400b\u2400');
    expect(storableText('x\ud800y\udc00z')).toBe('x\ufffdy\ufffdz');
    expect(storableText('emoji 😀 日本')).toBe('emoji 😀 日本');
    expect(storableHeaders({ 'x-a\u0000': 'v\u0000' })).toEqual({ 'x-a\u2400': 'v\u2400' });
  });
});
