/** Parameter rules shared by the provisioning routes (URLs, methods, names). */
import { AppError } from '../errors.js';
import type { Params } from './params.js';

export const HTTP_METHODS = ['GET', 'POST'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** An absolute http(s) URL (webhook / markup target), or undefined when absent; '' clears it (null). */
export function urlParam(p: Params, name: string): string | null | undefined {
  const v = p.get(name);
  if (v === undefined) return undefined;
  if (v === '') return null;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new AppError('InvalidParameter', `${name} must be an absolute http or https URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new AppError('InvalidParameter', `${name} must be an absolute http or https URL`);
  }
  if (v.length > 2048) throw new AppError('InvalidParameter', `${name} is longer than 2048 characters`);
  return v;
}

/** GET or POST (case-insensitive), normalised to upper case. */
export function methodParam(p: Params, name: string): HttpMethod | undefined {
  const v = p.get(name);
  if (v === undefined) return undefined;
  const m = v.toUpperCase();
  if (m !== 'GET' && m !== 'POST') throw new AppError('InvalidParameter', `${name} must be GET or POST`);
  return m;
}

export function friendlyNameParam(p: Params, name: string, max = 64): string | undefined {
  const v = p.get(name);
  if (v === undefined) return undefined;
  if (v.length === 0 || v.length > max) {
    throw new AppError('InvalidParameter', `${name} must be 1 to ${max} characters`);
  }
  return v;
}

export function apiVersionParam(p: Params, name = 'ApiVersion'): string | undefined {
  const v = p.get(name);
  if (v === undefined) return undefined;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(v))
    throw new AppError('InvalidParameter', `${name} must look like 2012-04-24`);
  return v;
}
