/**
 * A page made of a fixed set of files under one path (the dashboard, the web phone): only the
 * listed names are served (no directory walking), GET and HEAD only, with the page's Content
 * Security Policy; every other request passes on. Files come from `load`, which `keptFiles` makes
 * read-once for files of the installed package.
 */
import type { NextFunction, Request, Response } from 'express';

export interface StaticPage {
  /** Mount path, e.g. `/dashboard`; `/dashboard` and `/dashboard/` serve `index.html`. */
  readonly path: string;
  /** File name → Content-Type. */
  readonly types: Readonly<Record<string, string>>;
  readonly csp: string;
  readonly load: (name: string) => Promise<Buffer>;
}

/** `build` once per name, kept; a failed build is not remembered, so a transient error does not stick. */
export function keptFiles(build: (name: string) => Promise<Buffer>): (name: string) => Promise<Buffer> {
  const cache = new Map<string, Promise<Buffer>>();
  return (name) => {
    let file = cache.get(name);
    if (!file) {
      file = build(name);
      file.catch(() => cache.delete(name));
      cache.set(name, file);
    }
    return file;
  };
}

export function staticPage(page: StaticPage) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const path = req.path;
    const ours = path === page.path || path.startsWith(`${page.path}/`);
    const name = path.slice(page.path.length + 1) || 'index.html';
    const type = Object.hasOwn(page.types, name) ? page.types[name] : undefined;
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !ours || type === undefined) {
      next();
      return;
    }
    page.load(name).then(
      (body) => {
        res.setHeader('Content-Type', type);
        res.setHeader('Content-Length', body.length);
        res.setHeader('Content-Security-Policy', page.csp);
        res.setHeader('X-Content-Type-Options', 'nosniff');
        res.setHeader('Referrer-Policy', 'no-referrer');
        res.setHeader('Cache-Control', 'no-cache');
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      (err: unknown) => next(err),
    );
  };
}
