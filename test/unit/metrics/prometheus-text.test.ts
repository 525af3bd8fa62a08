/** The strict exposition parser the metrics tests rely on: what it accepts and what it refuses. */
import { describe, expect, it } from 'vitest';
import { parsePrometheusText, sampleValue } from '../../support/prometheus-text.js';

const GOOD = [
  '# HELP a_total Things, with "quotes" and \\\\ in help',
  '# TYPE a_total counter',
  'a_total{k="v\\"q\\\\\\n",m="x"} 3',
  'a_total{k="w"} 1.5e2 1700000000000',
  '# TYPE h histogram',
  'h_bucket{le="0.1"} 1',
  'h_bucket{le="+Inf"} 2',
  'h_sum 0.3',
  'h_count 2',
  '# TYPE g gauge',
  'g NaN',
  '',
].join('\n');

describe('parsePrometheusText', () => {
  it('parses families, labels with escapes, histograms and special values', () => {
    const f = parsePrometheusText(GOOD);
    expect(f.get('a_total')?.type).toBe('counter');
    expect(sampleValue(f, 'a_total', { k: 'v"q\\\n' })).toBe(3);
    expect(sampleValue(f, 'a_total', { k: 'w' })).toBe(150);
    expect(sampleValue(f, 'h_count')).toBe(2);
    expect(Number.isNaN(sampleValue(f, 'g'))).toBe(true);
  });

  it.each([
    ['a sample of an undeclared family', 'x 1\n'],
    ['a bad metric name', '# TYPE 1x counter\n'],
    ['an unknown type', '# TYPE x countr\n'],
    ['a bad value', '# TYPE x gauge\nx one\n'],
    ['an unquoted label value', '# TYPE x gauge\nx{a=b} 1\n'],
    ['a bad escape', '# TYPE x gauge\nx{a="\\t"} 1\n'],
    ['a repeated label', '# TYPE x gauge\nx{a="1",a="2"} 1\n'],
    ['TYPE after samples', '# HELP x h\nx 1\n# TYPE x gauge\n'],
    ['interleaved families', '# TYPE x gauge\nx 1\n# TYPE y gauge\ny 1\nx 2\n'],
    ['a missing final newline', '# TYPE x gauge\nx 1'],
    [
      'a histogram whose +Inf bucket differs from _count',
      '# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 3\n',
    ],
    ['a bucket on a summary', '# TYPE s summary\ns_bucket{le="1"} 1\n'],
  ])('refuses %s', (_what, text) => {
    expect(() => parsePrometheusText(text)).toThrow();
  });
});
