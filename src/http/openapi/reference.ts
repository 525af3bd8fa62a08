/**
 * The API reference, served without authentication: `/openapi.json` (generated once from the route
 * table), `/docs` (Redoc's bundled standalone script from the installed package — no CDN, so the
 * page works offline and leaks nothing) and `/docs/errors` (the error catalogue, one `#<code>`
 * anchor per code: the target of every `more_info` link).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { NextFunction, Request, Response } from 'express';
import { NOTIFICATION_CODES, restErrors } from '../../error-reference.js';
import { ERROR_REFERENCE_PATH } from '../../errors.js';
import type { RouteEntry } from '../router.js';
import { API_VERSION } from '../uris.js';
import { buildDocument } from './document.js';

export const OPENAPI_PATH = '/openapi.json';
export const DOCS_PATH = '/docs';
const REDOC_SCRIPT = '/docs/redoc.standalone.js';

// Only our own origin: the page must not reach any other host (fonts, analytics, CDNs).
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "worker-src 'self' blob:",
  "connect-src 'self'",
].join('; ');

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
/** The reference texts use `code` spans; everything else is text. */
const inline = (s: string) => escapeHtml(s).replace(/`([^`]+)`/g, '<code>$1</code>');

const PAGE_STYLE =
  'body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;line-height:1.4}' +
  'table{border-collapse:collapse;width:100%}td,th{border:1px solid #ccc;padding:.3rem .5rem;text-align:left;vertical-align:top}' +
  'tr:target{background:#fff3b0}code{background:#f3f3f3;padding:0 .2rem}';

export function errorsPage(): string {
  const rest = restErrors()
    .map(
      (e) =>
        `<tr id="${e.code}"><td><a href="#${e.code}">${e.code}</a></td><td>${e.status}</td><td>${e.name}</td>` +
        `<td>${escapeHtml(e.message)}</td><td>${inline(e.when)}</td></tr>`,
    )
    .join('\n');
  const notes = NOTIFICATION_CODES.map(
    (n) => `<tr id="${n.code}"><td><a href="#${n.code}">${n.code}</a></td><td>${inline(n.when)}</td></tr>`,
  ).join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Switchboard error reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>${PAGE_STYLE}</style></head>
<body><h1>Error reference</h1>
<p>Every REST error body carries <code>code</code>, <code>message</code>, <code>more_info</code> (a link to this page) and <code>status</code>. API reference: <a href="${DOCS_PATH}">${DOCS_PATH}</a>.</p>
<h2 id="rest">REST errors</h2>
<table><thead><tr><th>Code</th><th>HTTP</th><th>Name</th><th>Message</th><th>When</th></tr></thead><tbody>
${rest}
</tbody></table>
<h2 id="notifications">Notification codes</h2>
<p>Problems during a call or a message are not REST errors: they are Notifications with these <code>error_code</code>s.</p>
<table><thead><tr><th>Code</th><th>When</th></tr></thead><tbody>
${notes}
</tbody></table>
</body></html>
`;
}

const DOCS_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Switchboard API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>body{margin:0}</style></head>
<body><redoc spec-url="${OPENAPI_PATH}" hide-download-button></redoc>
<script src="${REDOC_SCRIPT}"></script></body></html>
`;

function sendText(res: Response, type: string, body: string | Buffer, csp = false): void {
  res.setHeader('Content-Type', type);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  if (csp) res.setHeader('Content-Security-Policy', CSP);
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

/**
 * Middleware for the reference paths; everything else passes on. The document is built on first use,
 * after every route has been registered.
 */
export function referenceRoutes(entries: readonly RouteEntry[], publicUrl: string) {
  let document: string | undefined;
  let redoc: Promise<Buffer> | undefined;
  const errors = errorsPage();
  return (req: Request, res: Response, next: NextFunction): void => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      next();
      return;
    }
    const path = req.path.replace(/\/+$/, '') || '/';
    if (path === OPENAPI_PATH) {
      document ??= JSON.stringify(buildDocument(entries, { publicUrl, version: API_VERSION }));
      sendText(res, 'application/json; charset=utf-8', document);
    } else if (path === DOCS_PATH) {
      sendText(res, 'text/html; charset=utf-8', DOCS_PAGE, true);
    } else if (path === ERROR_REFERENCE_PATH) {
      sendText(res, 'text/html; charset=utf-8', errors, true);
    } else if (path === REDOC_SCRIPT) {
      redoc ??= readFile(createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js'));
      redoc.then(
        (js) => {
          res.setHeader('Cache-Control', 'public, max-age=86400');
          sendText(res, 'text/javascript; charset=utf-8', js);
        },
        (err: unknown) => {
          redoc = undefined;
          next(err);
        },
      );
    } else {
      next();
    }
  };
}
