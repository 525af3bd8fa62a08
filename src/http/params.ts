/**
 * Form bodies (application/x-www-form-urlencoded), parsed strictly: a malformed percent-escape is a
 * 400, not silently kept. Query strings are read through the same accessors.
 */
import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../errors.js';
import { type FormParams, state } from './context.js';

export function parseForm(body: string): FormParams {
  const out = new Map<string, string[]>();
  if (body.length === 0) return out;
  for (const pair of body.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawName = eq === -1 ? pair : pair.slice(0, eq);
    const rawValue = eq === -1 ? '' : pair.slice(eq + 1);
    let name: string;
    let value: string;
    try {
      name = decodeURIComponent(rawName.replace(/\+/g, ' '));
      value = decodeURIComponent(rawValue.replace(/\+/g, ' '));
    } catch {
      throw new AppError(
        'MalformedBody',
        `Malformed form body: bad percent-encoding in "${rawName.slice(0, 40)}"`,
      );
    }
    const list = out.get(name);
    if (list) list.push(value);
    else out.set(name, [value]);
  }
  return out;
}

/** Middleware: reads the raw body text (already limited by express.text) into `state(res).form`. */
export function formBody(req: Request, res: Response, next: NextFunction): void {
  const body: unknown = req.body;
  if (typeof body === 'string') {
    state(res).form = parseForm(body);
  } else {
    const method = req.method;
    const length = Number(req.headers['content-length'] ?? 0);
    const chunked = req.headers['transfer-encoding'] !== undefined;
    if ((method === 'POST' || method === 'PUT') && (length > 0 || chunked) && !req.is('application/json')) {
      throw new AppError(
        'UnsupportedMediaType',
        `Unsupported Content-Type "${req.headers['content-type'] ?? ''}"; send application/x-www-form-urlencoded`,
      );
    }
    state(res).form = new Map();
  }
  next();
}

/** Accessors over form (body) or query parameters. First value wins for single-valued reads. */
export class Params {
  constructor(private readonly map: FormParams) {}

  static body(res: Response): Params {
    return new Params(state(res).form ?? new Map());
  }

  static query(req: Request): Params {
    const out = new Map<string, string[]>();
    for (const [k, v] of Object.entries(req.query)) {
      if (typeof v === 'string') out.set(k, [v]);
      else if (Array.isArray(v))
        out.set(
          k,
          v.filter((x): x is string => typeof x === 'string'),
        );
    }
    return new Params(out);
  }

  has(name: string): boolean {
    return this.map.has(name);
  }

  get(name: string): string | undefined {
    return this.map.get(name)?.[0];
  }

  all(name: string): readonly string[] {
    return this.map.get(name) ?? [];
  }

  required(name: string): string {
    const v = this.get(name);
    if (v === undefined || v === '') throw new AppError('MissingParameter', `${name} is required`);
    return v;
  }

  /** `true`/`false` (case-insensitive); anything else is a 400 naming the parameter. */
  bool(name: string): boolean | undefined {
    const v = this.get(name);
    if (v === undefined) return undefined;
    if (/^true$/i.test(v)) return true;
    if (/^false$/i.test(v)) return false;
    throw new AppError('InvalidParameter', `${name} must be true or false`);
  }

  /** A whole number within bounds, else a 400 naming the parameter. */
  int(name: string, min: number, max: number): number | undefined {
    const v = this.get(name);
    if (v === undefined || v === '') return undefined;
    if (!/^-?\d+$/.test(v)) throw new AppError('InvalidParameter', `${name} must be a whole number`);
    const n = Number(v);
    if (n < min || n > max)
      throw new AppError('InvalidParameter', `${name} must be between ${min} and ${max}`);
    return n;
  }

  /** One of `allowed` (exact), else a 400 listing them. */
  oneOf<T extends string>(name: string, allowed: readonly T[]): T | undefined {
    const v = this.get(name);
    if (v === undefined) return undefined;
    const hit = allowed.find((a) => a === v);
    if (hit === undefined)
      throw new AppError('InvalidParameter', `${name} must be one of ${allowed.join(', ')}`);
    return hit;
  }

  entries(): Array<[string, string]> {
    const out: Array<[string, string]> = [];
    for (const [k, vs] of this.map) for (const v of vs) out.push([k, v]);
    return out;
  }
}
