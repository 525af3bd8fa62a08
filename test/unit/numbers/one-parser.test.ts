/**
 * House rule: what an E.164 number or a SIP URI's user part is, is decided in one place
 * (src/numbers/address.ts, on top of src/sip/sip-uri.ts). A second regular expression elsewhere
 * would drift from it, and a value would be valid on one route and refused on another.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await sources(path)));
    else if (e.name.endsWith('.ts')) out.push(path);
  }
  return out;
}

/** Regular-expression text that re-decides an E.164 number or pulls the user out of a SIP URI. */
const RULES: ReadonlyArray<[string, RegExp]> = [
  ['E.164 pattern', /\\\+\[1-9\]\\d|\\\+\?\[0-9\]\{1,15\}/],
  ['SIP URI user pattern', /sips\?:\(\[\^@/],
];

describe('one address parser', () => {
  it('the rules find what they are meant to find', () => {
    expect(RULES[0]![1].test(String.raw`const E164 = /^\+[1-9]\d{7,14}$/;`)).toBe(true);
    expect(RULES[1]![1].test('const m = /^sips?:([^@;?]+)@/i.exec(uri);')).toBe(true);
  });

  it('no file under src/ other than the parser carries its own E.164 or SIP-user pattern', async () => {
    const offenders: string[] = [];
    for (const file of await sources(join(ROOT, 'src'))) {
      const path = relative(ROOT, file);
      if (path === 'src/numbers/address.ts' || path === 'src/sip/sip-uri.ts') continue;
      const text = await readFile(file, 'utf8');
      for (const [name, rule] of RULES) if (rule.test(text)) offenders.push(`${path}: ${name}`);
    }
    expect(offenders).toEqual([]);
  });
});
