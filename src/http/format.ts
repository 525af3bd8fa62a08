/**
 * `.json` selects JSON (spec §General conventions 3). Both `/Accounts/{sid}.json` and
 * `/Accounts.json/{sid}` address the same resource: the suffix is removed from whichever path segment
 * carries it and the request continues with the canonical path. Everything else is XML.
 */
import type { NextFunction, Request, Response } from 'express';
import { state } from './context.js';

export function negotiateFormat(req: Request, res: Response, next: NextFunction): void {
  const q = req.url.indexOf('?');
  const path = q === -1 ? req.url : req.url.slice(0, q);
  const query = q === -1 ? '' : req.url.slice(q);
  const at = path.indexOf('.json');
  if (at === -1) {
    state(res).format = 'xml';
    next();
    return;
  }
  // The usual form: only the last segment carries the suffix (and is more than the suffix).
  if (at === path.length - 5 && at > 0 && path.charCodeAt(at - 1) !== 47 /* / */) {
    state(res).format = 'json';
    req.url = path.slice(0, at) + query;
    next();
    return;
  }
  const segments = path.split('/');
  let json = false;
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i] as string;
    if (seg.length > 5 && seg.endsWith('.json')) {
      segments[i] = seg.slice(0, -5);
      json = true;
    }
  }
  state(res).format = json ? 'json' : 'xml';
  if (json) req.url = segments.join('/') + query;
  next();
}
