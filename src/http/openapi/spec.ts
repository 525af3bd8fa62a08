/**
 * Route declarations: what each operation takes and answers, given next to its handlers in
 * `routes.resource(path, handlers, { spec })`. The router enforces the declared required members and
 * the OpenAPI document (document.ts) is generated from the same declarations, so the reference
 * cannot promise what the server does not check. Lengths come from MEMBER_MAX_LENGTH (validate.ts),
 * the table formBody enforces for every member.
 */
import type { SchemaName } from './schemas.js';

export type ParamType = 'string' | 'integer' | 'boolean' | 'url' | 'method' | 'date' | 'sid';

export interface ParamSpec {
  readonly name: string;
  readonly type?: ParamType;
  /**
   * true: absent → 400 21101 MissingParameter from the router, before the handler runs.
   * 'handler': required too, but the handler refuses its absence itself — after an authorization
   * check that must answer first (403/404), or with a code of its own (SMS Body: 21602).
   */
  readonly required?: boolean | 'handler';
  readonly enum?: readonly string[];
  /** May be given more than once (StatusCallbackEvent). */
  readonly repeated?: boolean;
  readonly description?: string;
}

export type ResponseSpec =
  | { readonly kind: 'one'; readonly schema: SchemaName; readonly status: 200 | 201 }
  | { readonly kind: 'list'; readonly schema: SchemaName }
  | { readonly kind: 'page'; readonly schema: SchemaName; readonly key: string }
  | { readonly kind: 'empty' }
  /** A JSON document whose members the caller defines (profiles, extension configuration). */
  | { readonly kind: 'json'; readonly status: 200 | 201 };

export interface OperationSpec {
  readonly summary: string;
  readonly description?: string;
  /** Query parameters for GET and DELETE, form members (or JSON members with `jsonBody`) otherwise. */
  readonly params?: readonly ParamSpec[];
  /** The body is a JSON document (profile API) rather than a form. */
  readonly jsonBody?: boolean;
  readonly response: ResponseSpec;
}

export interface RouteSpec {
  /** Groups the operations in the reference (Calls, Applications...). */
  readonly tag: string;
  /** Served as JSON only, without the `.json` suffix (the profile API). */
  readonly jsonOnly?: boolean;
  readonly GET?: OperationSpec;
  readonly POST?: OperationSpec;
  readonly PUT?: OperationSpec;
  readonly DELETE?: OperationSpec;
}

export const one = (schema: SchemaName, status: 200 | 201 = 200): ResponseSpec => ({
  kind: 'one',
  schema,
  status,
});
export const list = (schema: SchemaName): ResponseSpec => ({ kind: 'list', schema });
export const page = (schema: SchemaName, key: string): ResponseSpec => ({ kind: 'page', schema, key });
export const empty: ResponseSpec = { kind: 'empty' };
export const jsonDocument = (status: 200 | 201 = 200): ResponseSpec => ({ kind: 'json', status });

/** The members every create/update of a voice endpoint shares (Url + Method + fallback). */
export const voiceTarget = (prefix: string): ParamSpec[] => [
  { name: `${prefix}Url`, type: 'url' },
  { name: `${prefix}Method`, type: 'method' },
  { name: `${prefix}FallbackUrl`, type: 'url' },
  { name: `${prefix}FallbackMethod`, type: 'method' },
];
