/**
 * One browser script from a CommonJS package in node_modules (JsSIP ships no browser build), built
 * by esbuild once per process from the installed files: an IIFE that assigns the package's exports
 * to `globalThis[name]`. Node built-ins JsSIP names on paths a browser never takes are left out
 * (esbuild's browser platform resolves them to empty modules), so nothing comes from a CDN.
 */
import { build } from 'esbuild';

export async function bundleCommonJs(entry: string, name: string): Promise<string> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    format: 'iife',
    globalName: name,
    platform: 'browser',
    target: 'es2020',
    minify: true,
    write: false,
    logLevel: 'silent',
  });
  const [out] = result.outputFiles;
  if (!out) throw new Error(`esbuild produced no output for ${entry}`);
  // An IIFE's `var name` is a global in a browser page but not in every embedding (a vm context,
  // a module): say it explicitly.
  return `${out.text}globalThis[${JSON.stringify(name)}] = ${name};\n`;
}
