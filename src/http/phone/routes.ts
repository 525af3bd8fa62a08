/**
 * The sample web phone (`/phone`): a static page on JsSIP that registers as one of the account's
 * Clients over SIP/WebSocket (RFC 7118) and places and takes calls. Its files are read from the
 * package (`public/` beside this module); JsSIP is bundled once from the installed package
 * (browser-bundle.ts), so nothing comes from a CDN. `config.json` says where the SIP WebSocket
 * listeners are and the default organization's domain: public facts, no credentials.
 */

import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { NextFunction, Request, Response } from 'express';
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
  const cache = new Map<string, Promise<Buffer>>();
  const build = (name: string): Promise<Buffer> =>
    name === 'jssip.js'
      ? bundleCommonJs(createRequire(import.meta.url).resolve('jssip'), 'JsSIP').then((s) => Buffer.from(s))
      : readFile(new URL(name, PUBLIC_DIR));
  const load = (name: string): Promise<Buffer> => {
    if (name === 'config.json') {
      const { ws, wss } = settings.ports();
      return Promise.resolve(
        Buffer.from(JSON.stringify({ wsPort: ws, wssPort: wss, domain: settings.domain })),
      );
    }
    let file = cache.get(name);
    if (!file) {
      file = build(name);
      // A failed read is not remembered, so a transient error does not stick.
      file.catch(() => cache.delete(name));
      cache.set(name, file);
    }
    return file;
  };
  return (req: Request, res: Response, next: NextFunction): void => {
    const path = req.path;
    const ours = path === PHONE_PATH || path.startsWith(`${PHONE_PATH}/`);
    const name = path.slice(PHONE_PATH.length + 1) || 'index.html';
    const type = Object.hasOwn(TYPES, name) ? TYPES[name] : undefined;
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !ours || type === undefined) {
      next();
      return;
    }
    load(name).then(
      (body) => {
        res.setHeader('Content-Type', type);
        res.setHeader('Content-Length', body.length);
        res.setHeader('Content-Security-Policy', CSP);
        res.setHeader('X-Content-Type-Options', 'nosniff');
        res.setHeader('Referrer-Policy', 'no-referrer');
        res.setHeader('Cache-Control', 'no-cache');
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      (err: unknown) => next(err),
    );
  };
}
