import { createRequire } from 'node:module';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { bundleCommonJs } from '../../../../src/http/phone/browser-bundle.js';

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

  it('names the entry that cannot be built', async () => {
    await expect(bundleCommonJs('/nonexistent/entry.js', 'X')).rejects.toThrow();
  });
});
