/**
 * A strict parser of the Prometheus text exposition format 0.0.4
 * (https://prometheus.io/docs/instrumenting/exposition_formats/): every line is a `# HELP`, a
 * `# TYPE` or a sample; names and label names must be valid; label values use only the three
 * escapes; a family's TYPE comes before its samples and at most once; every sample belongs to a
 * declared family (histograms and summaries by their `_bucket`/`_sum`/`_count` series); a family's
 * samples are contiguous; histograms have a `+Inf` bucket equal to `_count`. Anything else throws,
 * naming the line, so a test fails on output Prometheus would reject.
 */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Family {
  readonly name: string;
  type: MetricType;
  help: string | null;
  readonly samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set<MetricType>(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

class ParseError extends Error {
  constructor(line: number, message: string, text: string) {
    super(`line ${line}: ${message}: ${JSON.stringify(text)}`);
  }
}

/**
 * A sample value as Prometheus reads it (Go's strconv.ParseFloat): decimal floats, and `Inf`,
 * `Infinity` and `NaN` in any letter case (prom-client writes an empty lag mean as `Nan`).
 */
function parseValue(text: string): number {
  if (/^\+?inf(inity)?$/i.test(text)) return Number.POSITIVE_INFINITY;
  if (/^-inf(inity)?$/i.test(text)) return Number.NEGATIVE_INFINITY;
  if (/^nan$/i.test(text)) return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error('bad value');
  return Number(text);
}

/** Labels from just after `{` to its `}`; returns them and the index after `}`. */
function parseLabels(s: string, start: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = start;
  for (;;) {
    if (s[i] === '}') return { labels, end: i + 1 };
    const eq = s.indexOf('=', i);
    if (eq < 0) throw new Error('label without =');
    const name = s.slice(i, eq);
    if (!LABEL_NAME.test(name)) throw new Error(`bad label name ${name}`);
    if (name in labels) throw new Error(`repeated label ${name}`);
    if (s[eq + 1] !== '"') throw new Error('label value not quoted');
    let value = '';
    let j = eq + 2;
    for (;;) {
      const c = s[j];
      if (c === undefined) throw new Error('unterminated label value');
      if (c === '"') break;
      if (c === '\\') {
        const n = s[j + 1];
        if (n === '\\') value += '\\';
        else if (n === '"') value += '"';
        else if (n === 'n') value += '\n';
        else throw new Error(`bad escape \\${n}`);
        j += 2;
        continue;
      }
      if (c === '\n') throw new Error('newline in label value');
      value += c;
      j++;
    }
    labels[name] = value;
    i = j + 1;
    if (s[i] === ',') i++;
    else if (s[i] !== '}') throw new Error('expected , or } after a label');
  }
}

/** The family a sample name belongs to, given the declared families. */
function familyOf(name: string, families: Map<string, Family>): Family | undefined {
  const exact = families.get(name);
  if (exact && exact.type !== 'histogram' && exact.type !== 'summary') return exact;
  const m = /^(.*)_(bucket|sum|count)$/.exec(name);
  if (m?.[1]) {
    const f = families.get(m[1]);
    if (f && (f.type === 'summary' || f.type === 'histogram')) {
      if (m[2] === 'bucket' && f.type !== 'histogram') return undefined;
      return f;
    }
  }
  return exact && exact.type === 'summary' ? exact : undefined;
}

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const finished = new Set<string>();
  let current: string | null = null;
  const enter = (name: string, line: number, raw: string) => {
    if (current === name) return;
    if (finished.has(name)) throw new ParseError(line, 'family samples not contiguous', raw);
    if (current) finished.add(current);
    current = name;
  };
  if (text.length > 0 && !text.endsWith('\n')) throw new Error('exposition must end with a newline');
  text
    .split('\n')
    .slice(0, -1)
    .forEach((raw, i) => {
      const line = i + 1;
      if (raw.trim() === '') return;
      if (raw.startsWith('#')) {
        const m = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(raw);
        if (!m) {
          if (/^# (HELP|TYPE)\b/.test(raw)) throw new ParseError(line, 'malformed descriptor', raw);
          return; // a plain comment
        }
        const [, kind, name, rest = ''] = m;
        if (!name || !METRIC_NAME.test(name)) throw new ParseError(line, 'bad metric name', raw);
        let f = families.get(name);
        if (!f) {
          f = { name, type: 'untyped', help: null, samples: [] };
          families.set(name, f);
        }
        enter(name, line, raw);
        if (kind === 'HELP') {
          if (f.help !== null) throw new ParseError(line, 'second HELP', raw);
          f.help = rest;
        } else {
          if (!TYPES.has(rest as MetricType)) throw new ParseError(line, 'unknown TYPE', raw);
          if (f.samples.length > 0) throw new ParseError(line, 'TYPE after samples', raw);
          f.type = rest as MetricType;
        }
        return;
      }
      const nameEnd = raw.search(/[{\s]/);
      const name = nameEnd < 0 ? raw : raw.slice(0, nameEnd);
      if (!METRIC_NAME.test(name)) throw new ParseError(line, 'bad metric name', raw);
      let labels: Record<string, string> = {};
      let rest = raw.slice(name.length);
      try {
        if (rest.startsWith('{')) {
          const parsed = parseLabels(raw, name.length + 1);
          labels = parsed.labels;
          rest = raw.slice(parsed.end);
        }
        const fields = rest.trim().split(/\s+/);
        if (!rest.startsWith(' ') || fields.length < 1 || fields.length > 2)
          throw new Error('expected a value and an optional timestamp');
        if (fields[1] !== undefined && !/^-?\d+$/.test(fields[1])) throw new Error('bad timestamp');
        const value = parseValue(fields[0] ?? '');
        const f = familyOf(name, families);
        if (!f) throw new Error('sample of an undeclared family');
        enter(f.name, line, raw);
        f.samples.push({ name, labels, value });
      } catch (e) {
        if (e instanceof ParseError) throw e;
        throw new ParseError(line, (e as Error).message, raw);
      }
    });
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

/** Each label set of a histogram has buckets that never decrease and a `+Inf` bucket equal to `_count`. */
function checkHistogram(f: Family): void {
  const groups = new Map<string, { buckets: number[]; inf?: number; count?: number }>();
  for (const s of f.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const g = groups.get(key) ?? { buckets: [] };
    groups.set(key, g);
    if (s.name === `${f.name}_bucket`) {
      if (le === undefined) throw new Error(`${f.name}: bucket without le`);
      if (le === '+Inf') g.inf = s.value;
      else g.buckets.push(s.value);
    } else if (s.name === `${f.name}_count`) g.count = s.value;
  }
  for (const [key, g] of groups) {
    if (g.inf === undefined || g.count === undefined || g.inf !== g.count)
      throw new Error(`${f.name}${key}: +Inf bucket and _count disagree`);
    for (let i = 1; i < g.buckets.length; i++)
      if ((g.buckets[i] ?? 0) < (g.buckets[i - 1] ?? 0)) throw new Error(`${f.name}${key}: buckets decrease`);
  }
}

/** The value of the one sample of `name` whose labels include `labels` (undefined if none). */
export function sampleValue(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const f of families.values())
    for (const s of f.samples)
      if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) return s.value;
  return undefined;
}
