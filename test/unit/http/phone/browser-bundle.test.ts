import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleCommonJs } from '../../../../src/http/phone/browser-bundle.js';

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

/** Runs a bundle in a fresh global scope (no Node require, no process) and returns that scope. */
function run(bundle: string, globals: Record<string, unknown> = {}): Record<string, unknown> {
  const scope: Record<string, unknown> = { ...globals };
  scope.globalThis = scope;
  runInNewContext(bundle, scope);
  return scope;
}

describe('bundleCommonJs', () => {
  it("bundles the installed JsSIP into a script that defines it without Node's require", async () => {
    const entry = createRequire(import.meta.url).resolve('jssip');
    const scope = run(await bundleCommonJs(entry, 'JsSIP'), { navigator: { userAgent: 'test' } });
    const jssip = scope.JsSIP as { version: string; UA: unknown; WebSocketInterface: unknown };
    const pkg = createRequire(import.meta.url)('jssip/package.json') as { version: string };
    expect(jssip.version).toBe(pkg.version);
    expect(typeof jssip.UA).toBe('function');
    expect(typeof jssip.WebSocketInterface).toBe('function');
  });

  it('follows the browser field, nested node_modules first, JSON, and fails only missing modules that run', async () => {
    const root = await mkdtemp(join(tmpdir(), 'sb-bundle-'));
    dirs.push(root);
    const files: Record<string, string> = {
      'app/index.js': [
        "const dep = require('dep');",
        "const data = require('./data.json');",
        "module.exports = { dep, n: data.n, lazy: () => require('node:tty') };",
      ].join('\n'),
      'app/data.json': '{"n": 7}',
      'app/node_modules/dep/package.json': '{"main": "./node.js", "browser": "./browser.js"}',
      'app/node_modules/dep/browser.js': "module.exports = 'browser';",
      'app/node_modules/dep/node.js': "module.exports = 'node';",
      'node_modules/dep/index.js': "module.exports = 'outer';",
    };
    for (const [path, text] of Object.entries(files)) {
      await mkdir(join(root, path, '..'), { recursive: true });
      await writeFile(join(root, path), text);
    }
    const scope = run(await bundleCommonJs(join(root, 'app/index.js'), 'App'));
    const app = scope.App as { dep: string; n: number; lazy: () => unknown };
    expect(app.dep).toBe('browser');
    expect(app.n).toBe(7);
    expect(() => app.lazy()).toThrow(/not in the bundle: node:tty/);
  });
});
