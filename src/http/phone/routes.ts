/**
 * The sample web phone (`/phone`): a static page on JsSIP that registers as one of the account's
 * Clients over SIP/WebSocket (RFC 7118) and places and takes calls. Its files are read from the
 * package (`public/` beside this module); JsSIP is bundled once from the installed package
 * (browser-bundle.ts), so nothing comes from a CDN. `config.json` says where the SIP WebSocket
 * listeners are and the default organization's domain: public facts, no credentials.
 */

import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { keptFiles, staticPage } from '../static-page.js';
import { bundleCommonJs } from './browser-bundle.js';

export const PHONE_PATH = '/phone';

/** What the page needs to know of the server. */
export interface PhoneSettings {
  /** Bound SIP WebSocket ports (known once SIP has started; null when that listener is off). */
  readonly ports: () => { readonly ws: number | null; readonly wss: number | null };
  /** Domain of the default organization, the realm its clients register in. */
  readonly domain: string;
}

const TYPES: Readonly<Record<string, string>> = {
  'index.html': 'text/html; charset=utf-8',
  'phone.css': 'text/css; charset=utf-8',
  'phone.js': 'text/javascript; charset=utf-8',
  'jssip.js': 'text/javascript; charset=utf-8',
  'config.json': 'application/json; charset=utf-8',
};

// Own scripts only (no inline code); the SIP WebSocket listens on other ports than this page, so
// connect-src names the ws: and wss: schemes.
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "media-src 'self' blob:",
  "connect-src 'self' ws: wss:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

const PUBLIC_DIR = new URL('./public/', import.meta.url);

/** Middleware for `/phone` and its files; everything else passes on. */
export function phoneRoutes(settings: PhoneSettings) {
  const kept = keptFiles((name) =>
    name === 'jssip.js'
      ? bundleCommonJs(createRequire(import.meta.url).resolve('jssip'), 'JsSIP').then((s) => Buffer.from(s))
      : readFile(new URL(name, PUBLIC_DIR)),
  );
  const load = (name: string): Promise<Buffer> => {
    if (name !== 'config.json') return kept(name);
    const { ws, wss } = settings.ports();
    return Promise.resolve(
      Buffer.from(JSON.stringify({ wsPort: ws, wssPort: wss, domain: settings.domain })),
    );
  };
  return staticPage({ path: PHONE_PATH, types: TYPES, csp: CSP, load });
}
