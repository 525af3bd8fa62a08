/**
 * The paging envelope (spec §Paging envelope), shared by every paged list. Pages are zero-indexed;
 * `num_pages` is the index of the last page (0 when everything fits on one page, as the spec's
 * examples show); `next_page_uri` carries `AfterSid`. See docs/decisions.md.
 */
import type { Request } from 'express';
import { AppError } from '../errors.js';
import type { Format } from './render.js';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;

export interface PageRequest {
  readonly page: number;
  readonly pageSize: number;
  readonly offset: number;
}

export function parsePage(req: Request): PageRequest {
  const q = req.query;
  const page = intParam(q.Page, 'Page', 0) ?? 0;
  const size = intParam(q.PageSize, 'PageSize', 1) ?? DEFAULT_PAGE_SIZE;
  const pageSize = Math.min(size, MAX_PAGE_SIZE);
  return { page, pageSize, offset: page * pageSize };
}

function intParam(v: unknown, name: string, min: number): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !/^\d{1,9}$/.test(v) || Number(v) < min) {
    throw new AppError('InvalidParameter', `${name} must be a whole number >= ${min}`);
  }
  return Number(v);
}

/**
 * Builds the envelope. `path` is the canonical list path (e.g. `/2012-04-24/Accounts/AC…/Recordings`);
 * filters of the request are kept in every page URI so following them gives the same list.
 */
export function pageEnvelope(opts: {
  req: Request;
  format: Format;
  path: string;
  page: PageRequest;
  total: number;
  count: number;
  lastSid?: string | undefined;
  extra?: Record<string, string | number>;
}): Record<string, string | number> {
  const { page, pageSize } = opts.page;
  const lastPage = Math.max(0, Math.ceil(opts.total / pageSize) - 1);
  const base = opts.path + (opts.format === 'json' ? '.json' : '');
  const keep: string[] = [];
  for (const [k, v] of Object.entries(opts.req.query)) {
    if (k === 'Page' || k === 'PageSize' || k === 'AfterSid') continue;
    for (const value of Array.isArray(v) ? v : [v]) {
      if (typeof value === 'string') keep.push(`${encodeURIComponent(k)}=${encodeURIComponent(value)}`);
    }
  }
  const uri = (p: number, afterSid?: string) =>
    `${base}?${[...keep, `Page=${p}`, `PageSize=${pageSize}`, ...(afterSid ? [`AfterSid=${afterSid}`] : [])].join('&')}`;
  const start = page * pageSize;
  return {
    page,
    num_pages: lastPage,
    page_size: pageSize,
    total: opts.total,
    start,
    end: opts.count === 0 ? start : start + opts.count - 1,
    ...opts.extra,
    uri: uri(page),
    first_page_uri: uri(0),
    previous_page_uri: page > 0 ? uri(page - 1) : 'null',
    next_page_uri: page < lastPage ? uri(page + 1, opts.lastSid) : 'null',
    last_page_uri: uri(lastPage),
  };
}

/**
 * `SortBy=<attribute>:<asc|desc>` (direction optional, default ascending); an attribute outside
 * `allowed` or another direction is a 400.
 */
export function parseSort<K extends string>(
  req: Request,
  allowed: readonly K[],
  fallback: K,
): { by: K; direction: 'asc' | 'desc' } {
  const raw = req.query.SortBy;
  if (raw === undefined) return { by: fallback, direction: 'asc' };
  if (typeof raw !== 'string') throw new AppError('InvalidParameter', 'SortBy must be given once');
  const [attr, dir = 'asc', ...rest] = raw.split(':');
  const by = allowed.find((a) => a === attr);
  if (!by || rest.length > 0 || (dir !== 'asc' && dir !== 'desc')) {
    throw new AppError('InvalidParameter', `SortBy must be <${allowed.join('|')}>:<asc|desc>`);
  }
  return { by, direction: dir };
}
