/**
 * The supervisor dashboard (`/dashboard`): a static page and its small browser modules, read from the
 * package (`public/` beside this file; `npm run build` copies it next to the compiled module), served
 * without authentication. The page itself logs in with account credentials and talks only to the
 * public REST API (and the Supervisor stream when the server offers it): it has no private path in.
 */
import { readFile } from 'node:fs/promises';
import { keptFiles, staticPage } from '../static-page.js';

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
  const load = keptFiles((name) => readFile(new URL(name, PUBLIC_DIR)));
  return staticPage({ path: DASHBOARD_PATH, types: ASSETS, csp: CSP, load });
}
