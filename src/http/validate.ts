/** Parameter rules shared by the provisioning routes (URLs, methods, names). */
import { SUBJECT_MAX } from '../email/email-service.js';
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

/**
 * Longest accepted value of each form member, in characters (docs/errors.md "Length limits").
 * Checked for every form body in one place (formBody), so a member cannot be stored or sent on
 * (SIP headers, SMTP) at any length just because its route forgot a check. Routes may still apply
 * stricter rules of their own (Body of an SMS: 1,600).
 */
export const MEMBER_MAX_LENGTH: Readonly<Record<string, number>> = {
  FriendlyName: 64,
  Proxy: 256,
  UserName: 128,
  Password: 128,
  Login: 128,
  EmailAddress: 254,
  DomainName: 253,
  Organization: 253,
  Subject: SUBJECT_MAX,
  From: 2048,
  To: 2048,
  CC: 2048,
  BCC: 2048,
  Type: 255,
  ApiVersion: 10,
  ExtensionName: 64,
  StatusCallbackEvent: 256,
  Body: 65_536,
  // A JSON document; the body size limit (HTTP_BODY_LIMIT) bounds it.
  ConfigurationData: Number.POSITIVE_INFINITY,
};

/** Members ending in `Url` (webhooks, markup): the URL limit browsers and proxies agree on. */
export const URL_MAX_LENGTH = 2048;
/** Members ending in `Sid`: sids are 34 characters; an email address may stand for an account. */
export const SID_MAX_LENGTH = 254;
/** Any other member. */
export const DEFAULT_MAX_LENGTH = 1024;
/** Longest member name. */
export const NAME_MAX_LENGTH = 64;

export function maxLengthOf(name: string): number {
  const fixed = MEMBER_MAX_LENGTH[name];
  if (fixed !== undefined) return fixed;
  if (name.endsWith('Url')) return URL_MAX_LENGTH;
  if (name.endsWith('Sid')) return SID_MAX_LENGTH;
  return DEFAULT_MAX_LENGTH;
}

/** 400 naming the first member longer than its limit (or with an overlong name). */
export function checkMemberLengths(form: ReadonlyMap<string, readonly string[]>): void {
  for (const [name, values] of form) {
    if (name.length > NAME_MAX_LENGTH) {
      throw new AppError(
        'InvalidParameter',
        `Parameter name "${name.slice(0, 32)}…" is longer than ${NAME_MAX_LENGTH} characters`,
      );
    }
    const max = maxLengthOf(name);
    for (const v of values) {
      if (v.length > max) {
        throw new AppError('InvalidParameter', `${name} is longer than ${max} characters (${v.length})`);
      }
    }
  }
}
