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

/**
 * Imports point down: http → actors → ports ← adapters/stores. An adapter folder (sip, smpp, media,
 * webhooks) is reached from above only through its port (`port.ts`, or `index.ts` where the folder
 * is one façade); stores and adapters never import actors, routes, the composition root or the
 * services above them; store implementations (postgres/, redis/) are reached only by composition.
 */
const ADAPTERS = ['src/sip/', 'src/smpp/', 'src/media/', 'src/webhooks/'];
const ABOVE_ADAPTERS = [
  'src/actors/',
  'src/http/',
  'src/server.ts',
  'src/composition/',
  'src/main.ts',
  'src/cli/',
  'src/profiles/',
  'src/notifications/',
  'src/recordings/recording-service.ts',
  'src/email/',
];
const adapterOf = (path: string) => ADAPTERS.find((a) => path.startsWith(a));
// `src/sip/sip-uri.ts` is the one SIP URI model and `name-addr.ts` its header form (pure, no I/O):
// every layer that reads addresses uses them.
const SIP_MODEL = new Set(['src/sip/sip-uri.ts', 'src/sip/name-addr.ts']);
const isPort = (path: string) =>
  (/\/(port|index)\.ts$/.test(path) && path.split('/').length === 3) || SIP_MODEL.has(path);
const isStoreImpl = (path: string) =>
  path.startsWith('src/store/postgres/') || path.startsWith('src/store/redis/');
// The composition root (server.ts orders the steps in composition/) and the configuration parser
// (which reads adapter URLs such as SMPP_URL).
const COMPOSITION = ['src/server.ts', 'src/composition/', 'src/main.ts', 'src/config.ts', 'src/cli/'];
const isCompositionRoot = (path: string) => path === 'src/server.ts' || path.startsWith('src/composition/');

/** Why `from` may not import `to` (both repo-relative .ts paths), or null when it may. */
function layerViolation(from: string, to: string): string | null {
  const fromAdapter = adapterOf(from);
  const toAdapter = adapterOf(to);
  const above = ABOVE_ADAPTERS.some((p) => to.startsWith(p));
  if (from.startsWith('src/store/') && (above || toAdapter)) return 'a store imports what sits above it';
  if (fromAdapter && above) return 'an adapter imports what sits above it';
  if (fromAdapter && toAdapter && toAdapter !== fromAdapter && !isPort(to))
    return 'an adapter reaches into another adapter past its port';
  if (
    !fromAdapter &&
    !from.startsWith('src/store/') &&
    toAdapter &&
    !isPort(to) &&
    !COMPOSITION.some((c) => from.startsWith(c))
  )
    return 'reaches into an adapter past its port';
  if (isStoreImpl(to) && !from.startsWith('src/store/') && !COMPOSITION.some((c) => from.startsWith(c)))
    return 'reaches a store implementation outside composition';
  if (
    (to.startsWith('src/http/') || isCompositionRoot(to)) &&
    !from.startsWith('src/http/') &&
    !COMPOSITION.some((c) => from.startsWith(c))
  )
    return 'imports the HTTP layer or the composition root';
  return null;
}

describe('imports point down', () => {
  it('flags a planted violation of each kind', () => {
    expect(
      layerViolation('src/store/redis/change-bus.ts', 'src/actors/account/account-service.ts'),
    ).not.toBeNull();
    expect(layerViolation('src/sip/routing-policy.ts', 'src/profiles/multi-provider.ts')).not.toBeNull();
    expect(layerViolation('src/actors/call/call-runtime.ts', 'src/sip/transport.ts')).not.toBeNull();
    expect(layerViolation('src/actors/sms/sms-service.ts', 'src/smpp/errors.ts')).not.toBeNull();
    expect(layerViolation('src/actors/call/call-runtime.ts', 'src/store/postgres/db.ts')).not.toBeNull();
    expect(layerViolation('src/sip/service.ts', 'src/http/app.ts')).not.toBeNull();
    expect(layerViolation('src/actors/call/call-runtime.ts', 'src/sip/port.ts')).toBeNull();
    expect(layerViolation('src/server.ts', 'src/store/postgres/db.ts')).toBeNull();
    expect(layerViolation('src/composition/stores.ts', 'src/store/postgres/db.ts')).toBeNull();
    expect(layerViolation('src/composition/voice.ts', 'src/sip/service.ts')).toBeNull();
    expect(layerViolation('src/actors/call/call-runtime.ts', 'src/composition/voice.ts')).not.toBeNull();
    expect(layerViolation('src/store/redis/client.ts', 'src/composition/lifecycle.ts')).not.toBeNull();
    expect(layerViolation('src/sip/service.ts', 'src/composition/voice.ts')).not.toBeNull();
  });

  it('every import under src/ points down', async () => {
    const offenders: string[] = [];
    for (const file of await sources(join(ROOT, 'src'))) {
      const from = relative(ROOT, file);
      for (const spec of specifiers(await readFile(file, 'utf8'))) {
        if (!spec.startsWith('.')) continue;
        const to = relative(ROOT, resolve(dirname(file), spec)).replace(/\.js$/, '.ts');
        const why = layerViolation(from, to);
        if (why) offenders.push(`${from} -> ${to}: ${why}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
