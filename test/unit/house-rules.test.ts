/**
 * House rule: the product (src/) and the tools, demo and benchmarks (ops/) never import from test/;
 * what they share with the tests lives in src/ or ops/lib/ (tests may import those, not the reverse).
 */
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await sources(path)));
    else if (/\.(ts|mts|js|mjs)$/.test(e.name)) out.push(path);
  }
  return out;
}

/** Module specifiers of static imports/re-exports and dynamic `import()` calls. */
function specifiers(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/\b(?:import|export)\b[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g)) found.push(m[1]!);
  for (const m of text.matchAll(/\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g)) found.push(m[1]!);
  for (const m of text.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm)) found.push(m[1]!);
  return found;
}

describe('imports point away from test/', () => {
  it('finds the specifiers of every import form', () => {
    const text = [
      "import { a } from '../x.js';",
      "import type { B } from '../../test/support/y.js';",
      "export * from './z.js';",
      "const m = await import('../w.js');",
      "import './side.js';",
    ].join('\n');
    expect(specifiers(text)).toEqual([
      '../x.js',
      '../../test/support/y.js',
      './z.js',
      '../w.js',
      './side.js',
    ]);
  });

  it('no file under src/ or ops/ imports a module under test/', async () => {
    const offenders: string[] = [];
    for (const top of ['src', 'ops']) {
      for (const file of await sources(join(ROOT, top))) {
        for (const spec of specifiers(await readFile(file, 'utf8'))) {
          if (!spec.startsWith('.')) continue;
          const target = relative(ROOT, resolve(dirname(file), spec));
          if (target === 'test' || target.startsWith('test/'))
            offenders.push(`${relative(ROOT, file)} -> ${spec}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });
});
