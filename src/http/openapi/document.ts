/**
 * The OpenAPI 3.1 document, generated from the route table: every path × method that carries a
 * declaration (RouteOptions.spec) becomes an operation; parameters take their limits from
 * MEMBER_MAX_LENGTH (the table formBody enforces) and responses reference the resource schemas
 * (schemas.ts). A route registered without a declaration is left out, which the contract test
 * (test/integration/http/openapi.test.ts) reports. Each route the Twilio surface maps onto is
 * described a second time under its `2010-04-01` path with the Twilio schemas (twilio.ts).
 */
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../paging.js';
import type { Method, RouteEntry } from '../router.js';
import { maxLengthOf } from '../validate.js';
import { type JsonSchema, pageSchema, SCHEMAS } from './schemas.js';
import type { OperationSpec, ParamSpec, RouteSpec } from './spec.js';
import { type TwilioOperation, twilioOperation, twilioPageSchema, twilioSchemas } from './twilio.js';

export interface DocumentOptions {
  readonly publicUrl: string;
  readonly version: string;
}

const JSON_TYPE = 'application/json';
const FORM_TYPE = 'application/x-www-form-urlencoded';
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** `/2012-04-24/Accounts/:accountSid/Calls` → `/2012-04-24/Accounts/{accountSid}/Calls.json`. */
export function documentPath(template: string, spec: RouteSpec | undefined): string {
  const path = template.replace(/:([A-Za-z]+)/g, '{$1}');
  return spec?.jsonOnly ? path : `${path}.json`;
}

function paramSchema(p: ParamSpec, inForm: boolean): JsonSchema {
  const base: Record<string, unknown> = {};
  switch (p.type ?? 'string') {
    case 'integer':
      base.type = 'integer';
      break;
    case 'boolean':
      base.type = 'boolean';
      break;
    case 'url':
      base.type = 'string';
      base.format = 'uri';
      break;
    case 'method':
      base.type = 'string';
      base.enum = ['GET', 'POST'];
      break;
    case 'date':
      base.type = 'string';
      base.description = 'YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS (UTC)';
      break;
    default:
      base.type = 'string';
  }
  if (p.enum) base.enum = [...p.enum];
  // Every form member is checked against this limit before any handler runs (formBody).
  const max = maxLengthOf(p.name);
  if (inForm && base.type === 'string' && Number.isFinite(max)) base.maxLength = max;
  if (p.description) base.description = p.description;
  return p.repeated ? { type: 'array', items: base } : base;
}

const PAGE_PARAMS: ParamSpec[] = [
  { name: 'Page', type: 'integer', description: 'Zero-based page index' },
  {
    name: 'PageSize',
    type: 'integer',
    description: `Items per page (default ${DEFAULT_PAGE_SIZE}, at most ${MAX_PAGE_SIZE})`,
  },
];

function operationId(summary: string, taken: Set<string>): string {
  // "List a call's recordings" → listCallsRecordings
  const words = summary
    .replace(/'/g, '')
    .replace(/[^A-Za-z0-9 ]/g, ' ')
    .split(/\s+/)
    .filter((w) => w !== '' && !/^(a|an|the)$/i.test(w));
  const base = words.map((w, i) => (i === 0 ? w.toLowerCase() : w[0]?.toUpperCase() + w.slice(1))).join('');
  let id = base;
  for (let n = 2; taken.has(id); n++) id = `${base}${n}`;
  taken.add(id);
  return id;
}

const body = (schema: unknown) => ({ content: { [JSON_TYPE]: { schema } } });

function errorResponses(out: Record<string, unknown>, auth: boolean) {
  if (auth) out['401'] = { description: 'Missing or wrong credentials', ...body(ref('Error')) };
  out.default = { description: 'Error (see /docs/errors)', ...body(ref('Error')) };
  return out;
}

function responses(op: OperationSpec, schemas: Record<string, JsonSchema>, auth: boolean) {
  const r = op.response;
  const out: Record<string, unknown> = {};
  switch (r.kind) {
    case 'one':
      out[String(r.status)] = { description: r.schema, ...body(ref(r.schema)) };
      break;
    case 'list':
      out['200'] = { description: `List of ${r.schema}`, ...body({ type: 'array', items: ref(r.schema) }) };
      break;
    case 'page': {
      const name = `${r.schema}Page`;
      schemas[name] = pageSchema(r.key, r.schema);
      out['200'] = { description: `A page of ${r.schema}`, ...body(ref(name)) };
      break;
    }
    case 'empty':
      out['204'] = { description: 'Done; no body' };
      break;
    case 'json':
      out[String(r.status)] = { description: 'A JSON document', ...body({ type: 'object' }) };
      break;
  }
  return errorResponses(out, auth);
}

/** The responses of a 2010 operation: the Twilio schemas, every list as Twilio's page. */
function twilioResponses(t: TwilioOperation, schemas: Record<string, JsonSchema>, auth: boolean) {
  const r = t.response;
  const out: Record<string, unknown> = {};
  if (r.kind === 'one') out[String(r.status)] = { description: r.schema, ...body(ref(r.schema)) };
  else if (r.kind === 'empty') out['204'] = { description: 'Done; no body' };
  else {
    const name = `${r.schema}Page`;
    schemas[name] = twilioPageSchema(r.itemsKey, r.schema);
    out['200'] = { description: `A page of ${r.schema}`, ...body(ref(name)) };
  }
  return errorResponses(out, auth);
}

interface OperationTarget {
  /** Route template with `:name` parameters. */
  readonly path: string;
  readonly auth: boolean;
  readonly tag: string;
  /** Takes Page and PageSize. */
  readonly paged: boolean;
}

function operation(target: OperationTarget, method: Method, op: OperationSpec, ids: Set<string>) {
  const inQuery = method === 'GET' || method === 'DELETE';
  const parameters: unknown[] = [];
  for (const [, name] of target.path.matchAll(/:([A-Za-z]+)/g)) {
    parameters.push({ name, in: 'path', required: true, schema: { type: 'string' } });
  }
  const declared = [...(op.params ?? []), ...(target.paged ? PAGE_PARAMS : [])];
  const out: Record<string, unknown> = {
    operationId: operationId(op.summary, ids),
    summary: op.summary,
    tags: [target.tag],
    ...(op.description ? { description: op.description } : {}),
    security: target.auth ? [{ basicAuth: [] }] : [],
  };
  if (inQuery) {
    for (const p of declared) {
      parameters.push({
        name: p.name,
        in: 'query',
        required: p.required !== undefined && p.required !== false,
        schema: paramSchema(p, false),
        ...(p.description ? { description: p.description } : {}),
      });
    }
  } else if (declared.length > 0 || op.jsonBody) {
    const properties: Record<string, JsonSchema> = {};
    for (const p of declared) properties[p.name] = paramSchema(p, !op.jsonBody);
    const required = declared.filter((p) => p.required).map((p) => p.name);
    const schema = { type: 'object', properties, ...(required.length ? { required } : {}) };
    out.requestBody = {
      required: required.length > 0,
      content: { [op.jsonBody ? JSON_TYPE : FORM_TYPE]: { schema } },
    };
  }
  if (parameters.length > 0) out.parameters = parameters;
  return out;
}

export function buildDocument(
  entries: readonly RouteEntry[],
  opts: DocumentOptions,
): Record<string, unknown> {
  const schemas: Record<string, JsonSchema> = { ...SCHEMAS, ...twilioSchemas(SCHEMAS) };
  const paths: Record<string, Record<string, unknown>> = {};
  const twilio: Record<string, Record<string, unknown>> = {};
  const tags = new Set<string>();
  const ids = new Set<string>();
  for (const entry of entries) {
    const spec = entry.spec;
    if (!spec) continue;
    const item: Record<string, unknown> = {};
    for (const method of entry.methods) {
      const op = spec[method];
      if (!op) continue;
      tags.add(spec.tag);
      const target = { ...entry, tag: spec.tag, paged: op.response.kind === 'page' };
      item[method.toLowerCase()] = {
        ...operation(target, method, op, ids),
        responses: responses(op, schemas, entry.auth),
      };
      const t = twilioOperation(entry.path, spec, method, op);
      if (!t) continue;
      tags.add(t.tag);
      const path = documentPath(t.path, spec);
      const served = `Served by ${method} ${documentPath(entry.path, spec)} (see docs/twilio.md).`;
      twilio[path] ??= {};
      twilio[path][method.toLowerCase()] = {
        ...operation(
          { ...entry, path: t.path, tag: t.tag, paged: t.response.kind === 'page' },
          method,
          t.op,
          ids,
        ),
        description: served,
        responses: twilioResponses(t, schemas, entry.auth),
      };
    }
    if (Object.keys(item).length > 0) paths[documentPath(entry.path, spec)] = item;
  }
  Object.assign(paths, twilio);
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'Switchboard REST API',
      version: opts.version,
      description: [
        'The native `2012-04-24` API and the Twilio-compatible `2010-04-01` surface (tags `2010-04-01 …`,',
        'see docs/twilio.md). Form-encoded requests (`application/x-www-form-urlencoded`);',
        'a `.json` suffix selects JSON responses, which this document describes (without it the same',
        'resources are XML under `<ServiceResponse>`). HTTP Basic authentication with the account sid',
        '(or email address) and its AuthToken or password. Errors: [/docs/errors](/docs/errors).',
      ].join(' '),
    },
    servers: [{ url: opts.publicUrl }],
    tags: [...tags].sort().map((name) => ({ name })),
    paths,
    components: {
      schemas,
      securitySchemes: { basicAuth: { type: 'http', scheme: 'basic' } },
    },
  };
}
