/**
 * Delivery receipt text parser (SMPP v3.4 Appendix B):
 * `id:IIIIIIIIII sub:SSS dlvrd:DDD submit date:YYMMDDhhmm done date:YYMMDDhhmm stat:DDDDDDD err:E text:...`
 * Field order and presence vary by SMSC, so each field is found by its key, case-insensitively.
 */
export interface ReceiptText {
  readonly id: string;
  readonly sub?: string;
  readonly dlvrd?: string;
  readonly submitDate?: string;
  readonly doneDate?: string;
  readonly stat: string;
  readonly err?: string;
  readonly text?: string;
}

const FIELD = /(id|sub|dlvrd|submit date|done date|stat|err|text):/gi;

/** Parse receipt text; null when it has no id or no stat (not a receipt). */
export function parseReceiptText(input: string): ReceiptText | null {
  const found: { key: string; start: number; valueStart: number }[] = [];
  for (const m of input.matchAll(FIELD)) {
    const key = (m[1] ?? '').toLowerCase();
    const start = m.index ?? 0;
    // a key must start the string or follow whitespace, so "text:id:..." is not re-split
    if (start > 0 && !/\s/.test(input[start - 1] ?? '')) continue;
    if (found.some((f) => f.key === 'text')) break;
    found.push({ key, start, valueStart: start + m[0].length });
  }
  const fields = new Map<string, string>();
  for (let i = 0; i < found.length; i++) {
    const f = found[i];
    if (!f) continue;
    const end = f.key === 'text' ? input.length : (found[i + 1]?.start ?? input.length);
    if (!fields.has(f.key)) fields.set(f.key, input.slice(f.valueStart, end).trim());
  }
  const id = fields.get('id');
  const stat = fields.get('stat');
  if (!id || !stat) return null;
  return {
    id,
    stat: stat.toUpperCase(),
    sub: fields.get('sub'),
    dlvrd: fields.get('dlvrd'),
    submitDate: fields.get('submit date'),
    doneDate: fields.get('done date'),
    err: fields.get('err'),
    text: fields.get('text'),
  };
}

/**
 * Message ids are compared normalised: SMSCs disagree on hex vs decimal and leading zeros between
 * submit_sm_resp and receipt text. A purely decimal or hex id is kept as-is but lower-cased and
 * stripped of leading zeros.
 */
export function normaliseMessageId(id: string): string {
  const t = id.trim().toLowerCase();
  const stripped = t.replace(/^0+(?=.)/, '');
  return stripped;
}
