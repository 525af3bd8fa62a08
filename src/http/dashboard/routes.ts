/**
 * The supervisor dashboard (`/dashboard`): a static page and its small browser modules, read from the
 * package (`public/` beside this file; `npm run build` copies it next to the compiled module), served
 * without authentication. The page itself logs in with account credentials and talks only to the
 * public REST API (and the Supervisor stream when the server offers it): it has no private path in.
 */
import { readFile } from 'node:fs/promises';
import type { NextFunction, Request, Response } from 'express';

export const DASHBOARD_PATH = '/dashboard';

/** The files the page is made of; nothing else under the path is served (no directory walking). */
const ASSETS: Readonly<Record<string, string>> = {
  'index.html': 'text/html; charset=utf-8',
  'dashboard.css': 'text/css; charset=utf-8',
  'dashboard.js': 'text/javascript; charset=utf-8',
  'api.js': 'text/javascript; charset=utf-8',
  'stream.js': 'text/javascript; charset=utf-8',
  'chart.js': 'text/javascript; charset=utf-8',
};

// Our own origin only ('self' covers the same-origin ws:/wss: stream in current browsers); no inline
// script, so a call's From or To can never become code.
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

const PUBLIC_DIR = new URL('./public/', import.meta.url);

/** Middleware for `/dashboard` and its assets; everything else passes on. */
export function dashboardRoutes() {
  // Read once per file and kept: the files are part of the installed package and never change.
  const cache = new Map<string, Promise<Buffer>>();
  const load = (name: string): Promise<Buffer> => {
    let file = cache.get(name);
    if (!file) {
      file = readFile(new URL(name, PUBLIC_DIR));
      // A failed read is not remembered, so a transient error does not stick.
      file.catch(() => cache.delete(name));
      cache.set(name, file);
    }
    return file;
  };
  return (req: Request, res: Response, next: NextFunction): void => {
    const path = req.path;
    const ours = path === DASHBOARD_PATH || path.startsWith(`${DASHBOARD_PATH}/`);
    const name = path.slice(DASHBOARD_PATH.length + 1) || 'index.html';
    const type = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
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
