/**
 * One browser script from a CommonJS package in node_modules (JsSIP ships no browser build): every
 * module reachable through `require('...')` with a literal name, wrapped in a function and loaded on
 * first require, as browserify does. A package's `browser` field is honoured where it names a file;
 * names that resolve to nothing on disk (Node built-ins on branches the browser never takes) throw
 * when, and only if, they are required. Built once per process from the installed files.
 */
import { readFile, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

const REQUIRE = /\brequire\(\s*(['"])([^'"]+)\1\s*\)/g;

interface Module {
  readonly id: number;
  readonly file: string;
  source: string;
  readonly deps: Record<string, number | null>;
}

const isFile = (path: string) =>
  stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
const isDir = (path: string) =>
  stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );

/** Node's file resolution (RFC-free: the CommonJS algorithm): exact, `.js`, `.json`, directory. */
async function resolveFile(path: string): Promise<string | null> {
  for (const candidate of [path, `${path}.js`, `${path}.json`]) if (await isFile(candidate)) return candidate;
  if (!(await isDir(path))) return null;
  const manifest = join(path, 'package.json');
  if (await isFile(manifest)) {
    const pkg = JSON.parse(await readFile(manifest, 'utf8')) as { browser?: unknown; main?: unknown };
    const main =
      typeof pkg.browser === 'string' ? pkg.browser : typeof pkg.main === 'string' ? pkg.main : null;
    if (main) {
      const found = await resolveFile(resolve(path, main));
      if (found) return found;
    }
  }
  return (await isFile(join(path, 'index.js'))) ? join(path, 'index.js') : null;
}

/** A bare name through the node_modules folders above `from` (nearest first). */
async function resolvePackage(name: string, from: string): Promise<string | null> {
  for (let dir = from; ; dir = dirname(dir)) {
    const found = await resolveFile(join(dir, 'node_modules', name));
    if (found) return found;
    if (dirname(dir) === dir) return null;
  }
}

/**
 * The bundle of the package `entry` (a file path), which assigns its exports to `globalThis[name]`.
 */
export async function bundleCommonJs(entry: string, name: string): Promise<string> {
  const modules = new Map<string, Module>();
  const queue: Module[] = [];
  const add = (file: string): number => {
    const known = modules.get(file);
    if (known) return known.id;
    const m: Module = { id: modules.size, file, source: '', deps: {} };
    modules.set(file, m);
    queue.push(m);
    return m.id;
  };
  add(entry);
  for (let m = queue.shift(); m; m = queue.shift()) {
    const text = await readFile(m.file, 'utf8');
    if (m.file.endsWith('.json')) {
      m.source = `module.exports = ${text};`;
      continue;
    }
    m.source = text;
    for (const [, , spec] of text.matchAll(REQUIRE)) {
      if (spec === undefined || spec in m.deps) continue;
      const file =
        spec.startsWith('./') || spec.startsWith('../')
          ? await resolveFile(resolve(dirname(m.file), spec))
          : await resolvePackage(spec, dirname(m.file));
      m.deps[spec] = file === null ? null : add(file);
    }
  }
  const defs = [...modules.values()]
    .map((m) => `[function (require, module, exports) {\n${m.source}\n}, ${JSON.stringify(m.deps)}]`)
    .join(',\n');
  return `(function () {
var defs = [
${defs}
];
var cache = [];
function load(id) {
  if (cache[id]) return cache[id].exports;
  var module = { exports: {} };
  cache[id] = module;
  var def = defs[id];
  def[0].call(module.exports, function (spec) {
    var dep = def[1][spec];
    if (dep === null || dep === undefined) throw new Error('module not in the bundle: ' + spec);
    return load(dep);
  }, module, module.exports);
  return module.exports;
}
globalThis[${JSON.stringify(name)}] = load(0);
})();
`;
}
