/**
 * The one JSON renderer (snake_case members) and the one XML renderer (PascalCase elements under
 * `<ServiceResponse>`), spec §General conventions 3. Routes build a DTO with PascalCase keys once
 * and hand it here, so naming and escaping live in one place.
 */
import type { Response } from 'express';
import { create } from 'xmlbuilder2';
import type { XMLBuilder } from 'xmlbuilder2/lib/interfaces.js';
import { state } from './context.js';

export type Format = 'xml' | 'json';

/** A list inside a DTO: JSON array; XML container element with one `itemName` element per item. */
export class Items {
  constructor(
    readonly itemName: string,
    readonly items: ReadonlyArray<DtoValue>,
  ) {}
}

/** A member rendered in JSON under an explicit name (for names the snake_case rule cannot derive). */
export class Named {
  constructor(
    readonly jsonName: string,
    readonly value: DtoValue,
  ) {}
}

export type DtoValue = string | number | boolean | null | undefined | Dto | Items | Named;
export interface Dto {
  readonly [key: string]: DtoValue;
}

const snakeCache = new Map<string, string>();

/** `DateCreated` → `date_created`, `SMSMessages` → `sms_messages`, `Uri` → `uri`. */
export function snakeCase(key: string): string {
  let out = snakeCache.get(key);
  if (out === undefined) {
    out = key
      .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
      .replace(/([a-z\d])([A-Z])/g, '$1_$2')
      .toLowerCase();
    snakeCache.set(key, out);
  }
  return out;
}

export function toJson(value: DtoValue): unknown {
  if (value === undefined) return null;
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Items) {
    const items = value.items;
    const out = new Array<unknown>(items.length);
    for (let i = 0; i < items.length; i++) out[i] = toJson(items[i]);
    return out;
  }
  if (value instanceof Named) return toJson(value.value);
  // for...in over a plain DTO (own enumerable keys, insertion order): no entries array per object.
  const out: Record<string, unknown> = {};
  for (const k in value) {
    const v = value[k];
    if (v === undefined) continue;
    if (v === null || typeof v !== 'object') out[snakeCase(k)] = v;
    else out[v instanceof Named ? v.jsonName : snakeCase(k)] = toJson(v);
  }
  return out;
}

// XML 1.0 forbids most control characters; strip them rather than emit an unparsable document.
// biome-ignore lint/suspicious/noControlCharactersInRegex: that is the point
const XML_INVALID = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

function appendXml(parent: XMLBuilder, name: string, value: DtoValue): void {
  if (value === undefined) return;
  if (value instanceof Named) {
    appendXml(parent, name, value.value);
    return;
  }
  const el = parent.ele(name);
  if (value === null) return;
  if (value instanceof Items) {
    for (const item of value.items) appendXml(el, value.itemName, item);
    return;
  }
  if (typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) appendXml(el, k, v);
    return;
  }
  el.txt(String(value).replace(XML_INVALID, ''));
}

export function toXml(rootName: string, value: DtoValue, attrs?: Record<string, string | number>): string {
  const doc = create({ version: '1.0', encoding: 'UTF-8' }).ele('ServiceResponse');
  if (attrs) {
    const el = doc.ele(rootName);
    for (const [k, v] of Object.entries(attrs)) el.att(k, String(v));
    if (value instanceof Items) for (const item of value.items) appendXml(el, value.itemName, item);
  } else {
    appendXml(doc, rootName, value);
  }
  return doc.end({ prettyPrint: false });
}

/**
 * A JSON dialect: another API surface (the Twilio 2010-04-01 one) serving the same resources with its
 * own member names and paging. It reshapes the rendered JSON; routes stay unaware of it.
 */
export interface JsonDialect {
  /** One resource (or a bare list, as a JSON array) rendered under `rootName`. */
  resource(res: Response, rootName: string, json: unknown): unknown;
  /** A paged list: the native envelope and the rendered items. */
  page(
    res: Response,
    container: string,
    envelope: Record<string, string | number>,
    itemsKey: string,
    items: unknown[],
  ): unknown;
}

function dialectOf(res: Response): JsonDialect | undefined {
  return state(res).dialect;
}

/**
 * Sends one resource (or a list as Items) in the request's format. `headers` (name, value, name,
 * value…) go before Content-Type, as if set with setHeader before the call (see writeHeadAndBody).
 */
export function send(
  res: Response,
  format: Format,
  rootName: string,
  value: DtoValue,
  status = 200,
  headers: readonly string[] = NO_HEADERS,
): void {
  res.statusCode = status;
  let text: string;
  if (format === 'xml') text = toXml(rootName, value);
  else {
    const json = toJson(value);
    const dialect = dialectOf(res);
    text = JSON.stringify(dialect ? dialect.resource(res, rootName, json) : json);
  }
  writeHeadAndBody(res, format, text, Buffer.byteLength(text), headers);
}

const NO_HEADERS: readonly string[] = [];

/** A body rendered once and its length in bytes. */
interface RenderedBody {
  readonly text: string;
  readonly bytes: number;
}

/** Bodies of immutable records (a cached account row), per record object, root and format. */
const renderedBodies = new WeakMap<object, Map<string, RenderedBody>>();

/**
 * send() for a record that never changes once read (a changed account is a new object): its body is
 * rendered once per record, root and format, and sent as is afterwards. A dialect reshapes per
 * request, so dialect requests render every time. `headers` (name, value, name, value…) go before
 * Content-Type, as if set with setHeader before the call.
 */
export function sendRecord(
  res: Response,
  format: Format,
  rootName: string,
  record: object,
  dto: () => DtoValue,
  status = 200,
  headers: readonly string[] = NO_HEADERS,
): void {
  if (dialectOf(res)) {
    for (let i = 0; i < headers.length; i += 2) res.setHeader(headers[i] as string, headers[i + 1] as string);
    send(res, format, rootName, dto(), status);
    return;
  }
  let bodies = renderedBodies.get(record);
  if (bodies === undefined) {
    bodies = new Map();
    renderedBodies.set(record, bodies);
  }
  const key = format === 'xml' ? `xml ${rootName}` : rootName;
  let body = bodies.get(key);
  if (body === undefined) {
    const value = dto();
    const text = format === 'xml' ? toXml(rootName, value) : JSON.stringify(toJson(value));
    body = { text, bytes: Buffer.byteLength(text) };
    bodies.set(key, body);
  }
  res.statusCode = status;
  writeHeadAndBody(res, format, body.text, body.bytes, headers);
}

const CONTENT_TYPES: Record<Format, string> = {
  json: 'application/json; charset=utf-8',
  xml: 'application/xml; charset=utf-8',
};

/** Writes a rendered body (bypasses Express's res.send: no ETag, no content sniffing). */
export function writeBody(res: Response, format: Format, body: string | Buffer): void {
  writeHeadAndBody(res, format, body, typeof body === 'string' ? Buffer.byteLength(body) : body.length);
}

/** A JSON-only resource's document as it is (no envelope, no dialect): profiles, extensions, supervisor. */
export function writeJson(res: Response, body: unknown, status?: number): void {
  if (status !== undefined) res.statusCode = status;
  writeBody(res, 'json', JSON.stringify(body));
}

/**
 * The two headers go to writeHead rather than through setHeader: when no other header was set
 * before, Node then writes them without keeping a header map for the response (measurably cheaper
 * on a hot GET); otherwise writeHead adds them after the others, as setHeader did. Either way the
 * bytes on the wire are the same.
 */
function writeHeadAndBody(
  res: Response,
  format: Format,
  body: string | Buffer,
  bytes: number,
  headers: readonly string[] = NO_HEADERS,
): void {
  const all = ['Content-Type', CONTENT_TYPES[format], 'Content-Length', String(bytes)];
  res.writeHead(res.statusCode, headers.length === 0 ? all : [...headers, ...all]);
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

/**
 * Renders a paged list: JSON object with the envelope members and the items under `jsonItemsKey`;
 * XML container element carrying the envelope as attributes (Twilio/Restcomm form).
 */
export function renderPage(
  res: Response,
  format: Format,
  container: string,
  items: Items,
  envelope: Record<string, string | number>,
  jsonItemsKey: string,
): string {
  if (format === 'json') {
    const rendered = toJson(items) as unknown[];
    const dialect = dialectOf(res);
    const body = dialect
      ? dialect.page(res, container, envelope, jsonItemsKey, rendered)
      : { ...envelope, [jsonItemsKey]: rendered };
    return JSON.stringify(body);
  }
  const attrs: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(envelope)) attrs[k.replace(/_/g, '')] = v;
  return toXml(container, items, attrs);
}

/** Sends a paged list (see renderPage). */
export function sendPage(
  res: Response,
  format: Format,
  container: string,
  items: Items,
  envelope: Record<string, string | number>,
  jsonItemsKey: string,
): void {
  writeBody(res, format, renderPage(res, format, container, items, envelope, jsonItemsKey));
}

/** Whether the request came in on another API surface (its bodies are reshaped per request). */
export function hasDialect(res: Response): boolean {
  return dialectOf(res) !== undefined;
}
