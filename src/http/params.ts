/**
 * Form bodies (application/x-www-form-urlencoded), parsed strictly: a malformed percent-escape is a
 * 400, not silently kept. Query strings are read through the same accessors.
 */
import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../errors.js';
import { type FormParams, state } from './context.js';
import { checkMemberLengths } from './validate.js';

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
    refuseNul(name, value);
    const list = out.get(name);
    if (list) list.push(value);
    else out.set(name, [value]);
  }
  return out;
}

/** The form media type; every other type on a form endpoint is a 415 naming it. */
export const FORM_TYPE = 'application/x-www-form-urlencoded';

/**
 * NUL never reaches a store (Postgres text refuses it) nor a SIP message: a 400 naming the parameter.
 * Lone surrogates cannot get here: decodeURIComponent refuses their percent-encoding.
 */
export function refuseNul(name: string, value: string): void {
  if (name.includes('\u0000'))
    throw new AppError('InvalidParameter', 'A parameter name contains a NUL character');
  if (value.includes('\u0000'))
    throw new AppError('InvalidParameter', `${name.slice(0, 64)} must not contain NUL characters`);
}

/** Middleware: reads the raw body text (already limited by express.text) into `state(res).form`. */
export function formBody(req: Request, res: Response, next: NextFunction): void {
  const body: unknown = req.body;
  if (typeof body === 'string') {
    const form = parseForm(body);
    checkMemberLengths(form);
    state(res).form = form;
  } else {
    // A body of any other type (JSON included) would otherwise be ignored silently: the client
    // would believe its parameters were applied.
    const length = Number(req.headers['content-length'] ?? 0);
    const chunked = req.headers['transfer-encoding'] !== undefined;
    if (length > 0 || chunked || Number.isNaN(length)) {
      const type = (req.headers['content-type'] ?? '').slice(0, 100);
      throw new AppError(
        'UnsupportedMediaType',
        type === ''
          ? `A request body needs Content-Type ${FORM_TYPE}`
          : `Unsupported Content-Type "${type}"; this endpoint accepts ${FORM_TYPE}`,
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
