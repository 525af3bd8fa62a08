/**
 * The Twilio `2010-04-01` part of the OpenAPI document, generated from the two tables that make the
 * surface work, so the reference cannot describe another surface than the one served:
 * - paths and operations from the surface's mapping (twilio/surface.ts TWILIO_RESOURCES,
 *   twilioTemplate): every native route the surface maps onto appears under its 2010 path, with the
 *   native operation's parameters plus the Twilio aliases and date filters, minus the refused members;
 * - response schemas from the native resource schemas (schemas.ts) reshaped by the dialect's rules
 *   (twilio/dialect.ts DIALECT_RULES, TWILIO_PAGE_MEMBERS), the same rules that reshape responses.
 */

import type { Method } from '../router.js';
import {
  type Derivation,
  DIALECT_RULES,
  isUriMember,
  TWILIO_PAGE_MEMBERS,
  TWILIO_ROOT,
  TWILIO_SUBRESOURCES,
} from '../twilio/dialect.js';
import { dateFilterForms, PAGE_TOKEN, TWILIO_RESOURCES, twilioTemplate } from '../twilio/surface.js';
import type { JsonSchema } from './schemas.js';
import type { OperationSpec, ParamSpec, RouteSpec } from './spec.js';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
/** Every path this surface names is under the account's 2010 root. */
const TWILIO_PATH: JsonSchema = { type: 'string', pattern: `^${TWILIO_ROOT}/Accounts/` };

export const twilioSchemaName = (native: string) => `Twilio${native}`;

type Props = Record<string, JsonSchema>;

const isNullable = (s: JsonSchema) => Array.isArray(s.type) && s.type.includes('null');
const orNull = (s: JsonSchema): JsonSchema =>
  isNullable(s) || s.const === null
    ? s
    : { ...s, type: [s.type, 'null'], ...(Array.isArray(s.enum) ? { enum: [...s.enum, null] } : {}) };

/** Native paths (`pattern: ^/`) in URI members become 2010 paths, as twilioUri rewrites them. */
function rewritePaths(props: Readonly<Props>): Props {
  const out: Props = {};
  for (const [k, s] of Object.entries(props)) {
    if (isUriMember(k) && s.pattern === '^/') out[k] = TWILIO_PATH;
    else if (k === 'subresource_uris' && s.type === 'object') {
      const nested: Props = {};
      for (const [n, p] of Object.entries((s.properties ?? {}) as Props))
        nested[n] = p.pattern === '^/' ? TWILIO_PATH : p;
      out[k] = { ...s, properties: nested };
    } else out[k] = s;
  }
  return out;
}

/** The schema of a member the dialect derives, from the native members it reads. */
function derivedSchema(d: Derivation, props: Readonly<Props>, owner: string): JsonSchema {
  const src = (name: string): JsonSchema => {
    const s = props[name];
    if (!s) throw new Error(`the Twilio dialect of ${owner} reads ${name}, which its schema lacks`);
    return s;
  };
  if ('copy' in d) return src(d.copy);
  if ('text' in d) return { type: isNullable(src(d.text)) ? ['string', 'null'] : 'string' };
  if ('number' in d) return { type: isNullable(src(d.number)) ? ['integer', 'null'] : 'integer' };
  if ('value' in d) return { const: d.value };
  if ('rename' in d) {
    const s = src(d.rename);
    if (!Array.isArray(s.enum)) return s;
    const values = s.enum.map((v: unknown) => (typeof v === 'string' ? (d.values[v] ?? v) : v));
    return { ...s, enum: [...new Set(values)] };
  }
  if ('pick' in d) {
    const nested = (src(d.pick).properties ?? {}) as Props;
    const properties: Props = {};
    for (const [k, n] of Object.entries(d.members)) {
      if (!nested[n])
        throw new Error(`the Twilio dialect of ${owner} reads ${d.pick}.${n}, which its schema lacks`);
      properties[k] = nested[n];
    }
    return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
  }
  if ('when' in d) {
    src(d.kind);
    return orNull(src(d.when));
  }
  // The last candidate is the fallback the others are tried before.
  if ('first' in d) return src(d.first.at(-1) ?? '');
  const properties = Object.fromEntries(TWILIO_SUBRESOURCES.map(([k]) => [k, TWILIO_PATH]));
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}

/** The Twilio schemas (`Twilio<Native>`) of the resources the dialect reshapes. */
export function twilioSchemas(native: Readonly<Record<string, JsonSchema>>): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const rule of DIALECT_RULES) {
    const base = native[rule.schema];
    if (!base) throw new Error(`the Twilio dialect reshapes ${rule.schema}, which has no schema`);
    const properties = rewritePaths(base.properties as Props);
    const required = new Set(base.required as string[]);
    for (const [name, d] of Object.entries(rule.members)) {
      properties[name] = derivedSchema(d, properties, rule.schema);
      required.add(name);
    }
    out[twilioSchemaName(rule.schema)] = { ...base, properties, required: [...required] };
  }
  return out;
}

/** Twilio's paging envelope (TWILIO_PAGE_MEMBERS): absent page links are JSON null. */
export function twilioPageSchema(itemsKey: string, item: string): JsonSchema {
  const kinds: Record<string, JsonSchema> = {
    uri: TWILIO_PATH,
    link: { ...TWILIO_PATH, type: ['string', 'null'], description: 'null when there is no such page' },
    count: { type: 'integer', minimum: 0 },
    size: { type: 'integer', minimum: 1 },
  };
  const properties: Props = {};
  for (const [name, kind] of Object.entries(TWILIO_PAGE_MEMBERS)) properties[name] = kinds[kind] ?? {};
  properties[itemsKey] = { type: 'array', items: ref(item) };
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}

const itemsKeyOf = (schema: string, nativeKey: string | undefined): string => {
  const rule = DIALECT_RULES.find((r) => r.schema === schema);
  return nativeKey ?? rule?.listKey ?? rule?.roots[1].toLowerCase() ?? schema.toLowerCase();
};

export interface TwilioOperation {
  /** The 2010 route template (`/2010-04-01/Accounts/:accountSid/Messages/:messageSid`). */
  readonly path: string;
  /** The native template it is served by. */
  readonly nativePath: string;
  readonly tag: string;
  readonly op: OperationSpec;
  /** The response body schema names: one resource, or a page of it. */
  readonly response:
    | { readonly kind: 'one'; readonly status: number; readonly schema: string }
    | { readonly kind: 'page'; readonly schema: string; readonly itemsKey: string }
    | { readonly kind: 'empty' };
}

const PAGE_TOKEN_PARAM: ParamSpec = {
  name: PAGE_TOKEN,
  description: 'The cursor from next_page_uri (opaque; Page decides the offset)',
};

/**
 * The operation the surface answers on the 2010 path of a native route, or null when the surface
 * does not map onto that route (or its response has no Twilio representation).
 */
export function twilioOperation(
  nativePath: string,
  spec: RouteSpec,
  method: Method,
  op: OperationSpec,
): TwilioOperation | null {
  if (spec.jsonOnly) return null;
  const mapped = twilioTemplate(nativePath);
  if (!mapped) return null;
  const resource = mapped.resource ? TWILIO_RESOURCES[mapped.resource] : undefined;
  const r = op.response;
  let response: TwilioOperation['response'];
  if (r.kind === 'empty') response = { kind: 'empty' };
  else if (r.kind === 'one') response = { kind: 'one', status: r.status, schema: twilioSchemaName(r.schema) };
  else if (r.kind === 'page' || r.kind === 'list') {
    // Every 2010 list is paged, those the native surface returns whole included.
    response = {
      kind: 'page',
      schema: twilioSchemaName(r.schema),
      itemsKey: itemsKeyOf(r.schema, r.kind === 'page' ? r.key : undefined),
    };
  } else return null;
  if (response.kind !== 'empty' && !DIALECT_RULES.some((d) => twilioSchemaName(d.schema) === response.schema))
    return null;
  const refused = new Set(resource?.unsupported ?? []);
  const params: ParamSpec[] = (op.params ?? []).filter((p) => !refused.has(p.name));
  const add = (p: ParamSpec) => {
    if (!params.some((q) => q.name === p.name)) params.push(p);
  };
  if (response.kind === 'page') {
    if (resource?.dateFilter) {
      for (const [name, native] of dateFilterForms(resource.dateFilter)) {
        add({ name, type: 'date', description: `Sets ${native.join(' and ')}` });
      }
    }
    if (method === 'GET') add(PAGE_TOKEN_PARAM);
  } else if (method === 'POST' || method === 'PUT') {
    // A POST on a list creates; on one resource it updates (surface.ts nativeForm).
    const aliases =
      response.kind === 'one' && response.status === 201
        ? resource?.aliases?.create
        : resource?.aliases?.update;
    for (const p of aliases ?? []) add(p);
  }
  return {
    path: mapped.path,
    nativePath,
    tag: `${TWILIO_ROOT.slice(1)} ${mapped.resource ?? 'Accounts'}`,
    op: { summary: `Twilio: ${op.summary}`, params, response: op.response },
    response,
  };
}
