/**
 * The Twilio 2010-04-01 JSON dialect: the native representations (render.ts) reshaped into the member
 * names, value types and paging the `twilio` SDK reads (its `lib/rest/api/v2010/account/*.d.ts` are the
 * reference). Native members that Twilio lacks are kept (the SDK ignores them); members Twilio has that
 * the server can state truthfully are added; page links that do not exist are JSON null, not the
 * native surface's string "null". See docs/twilio.md.
 */
import type { Response } from 'express';
import { pageEnvelope, parsePage } from '../paging.js';
import type { JsonDialect } from '../render.js';
import { API_ROOT } from '../uris.js';

export const TWILIO_VERSION = '2010-04-01';
export const TWILIO_ROOT = `/${TWILIO_VERSION}`;

type Json = Record<string, unknown>;

/**
 * A native URI or URL as the Twilio surface names it: the version segment, `SMS/Messages` →
 * `Messages`, and the paging cursor `AfterSid` → `PageToken` (prefixed `PA`, as Twilio's are).
 */
export function twilioUri(value: unknown): unknown {
  if (typeof value !== 'string' || value === 'null') return value === 'null' ? null : value;
  const q = value.indexOf('?');
  const path = q === -1 ? value : value.slice(0, q);
  const query = q === -1 ? '' : value.slice(q);
  const mapped = path
    .replace(`${API_ROOT}/Accounts/`, `${TWILIO_ROOT}/Accounts/`)
    .replace(/\/SMS\/Messages(?=[/.]|$)/, '/Messages');
  return mapped + query.replace(/([?&])AfterSid=/, '$1PageToken=PA');
}

/**
 * How one Twilio member is made from the native representation (after its URIs are rewritten). The
 * runtime reshaping (below) and the OpenAPI schemas of this surface (openapi/twilio.ts) both read
 * these rules, so a member cannot be sent without being documented.
 */
export type Derivation =
  /** The native member's value. */
  | { readonly copy: string }
  /** The native member as a string (null stays null): Twilio types durations as strings. */
  | { readonly text: string }
  /** The native member as a number (null stays null). */
  | { readonly number: string }
  /** A constant. */
  | { readonly value: string | number | null }
  /** The native member with some values renamed. */
  | { readonly rename: string; readonly values: Readonly<Record<string, string>> }
  /** An object of booleans taken from the native object `pick` (absent → false). */
  | { readonly pick: string; readonly members: Readonly<Record<string, string>> }
  /** The native member `when` if `kind` has the value `is`, else null. */
  | { readonly when: string; readonly kind: string; readonly is: string }
  /** The first of these native members that is not null. */
  | { readonly first: readonly string[] }
  /** The account's list resources on this surface (TWILIO_SUBRESOURCES). */
  | { readonly subresources: true };

export interface DialectRule {
  /** The native resource schema (openapi/schemas.ts) this representation reshapes. */
  readonly schema: string;
  /** The root names the native handlers send it under: one resource, and its list. */
  readonly roots: readonly [string, string];
  /** Twilio's items key where a list is paged here from a whole native list. */
  readonly listKey?: string;
  /** Members added or replaced (Twilio's names and types), in addition to the native ones. */
  readonly members: Readonly<Record<string, Derivation>>;
}

/** The list resources this surface serves, by their names under an account. */
export const TWILIO_SUBRESOURCES: ReadonlyArray<[string, string]> = [
  ['applications', 'Applications'],
  ['calls', 'Calls'],
  ['incoming_phone_numbers', 'IncomingPhoneNumbers'],
  ['messages', 'Messages'],
  ['notifications', 'Notifications'],
  ['recordings', 'Recordings'],
];

export const DIALECT_RULES: readonly DialectRule[] = [
  {
    schema: 'Call',
    roots: ['Call', 'Calls'],
    members: {
      to_formatted: { copy: 'to' },
      from_formatted: { copy: 'from' },
      duration: { text: 'duration' },
      queue_time: { value: '0' },
      group_sid: { value: null },
      trunk_sid: { value: null },
    },
  },
  {
    schema: 'SmsMessage',
    roots: ['SMSMessage', 'SMSMessages'],
    members: {
      direction: { rename: 'direction', values: { incoming: 'inbound' } },
      error_code: { number: 'error_code' },
      num_media: { value: '0' },
      messaging_service_sid: { value: null },
    },
  },
  {
    schema: 'IncomingPhoneNumber',
    roots: ['IncomingPhoneNumber', 'IncomingPhoneNumbers'],
    listKey: 'incoming_phone_numbers',
    members: {
      capabilities: {
        pick: 'capabilities',
        members: { voice: 'voice_capable', sms: 'sms_capable', mms: 'mms_capable', fax: 'fax_capable' },
      },
      status: { value: 'in-use' },
    },
  },
  {
    schema: 'Recording',
    roots: ['Recording', 'Recordings'],
    members: {
      media_url: { copy: 'file_uri' },
      start_time: { copy: 'date_created' },
      duration: { text: 'duration' },
      status: { value: 'completed' },
      channels: { value: 1 },
      conference_sid: { value: null },
    },
  },
  { schema: 'Notification', roots: ['Notification', 'Notifications'], members: {} },
  {
    // Native applications have one markup URL and a Kind; Twilio's have one URL per channel.
    schema: 'Application',
    roots: ['Application', 'Applications'],
    listKey: 'applications',
    members: {
      voice_url: { when: 'rcml_url', kind: 'kind', is: 'voice' },
      voice_method: { value: 'POST' },
      sms_url: { when: 'rcml_url', kind: 'kind', is: 'sms' },
      sms_method: { value: 'POST' },
    },
  },
  {
    schema: 'Account',
    roots: ['Account', 'Accounts'],
    listKey: 'accounts',
    members: {
      owner_account_sid: { first: ['parent_sid', 'sid'] },
      subresource_uris: { subresources: true },
    },
  },
];

/** The members that hold a URI or URL: rewritten to this surface's paths. */
export const isUriMember = (name: string): boolean =>
  name === 'uri' || name.endsWith('_uri') || name.endsWith('_url');

function rewriteUris(json: Json): Json {
  const out: Json = { ...json };
  for (const [k, v] of Object.entries(out)) {
    if (isUriMember(k)) out[k] = twilioUri(v);
    else if (k === 'subresource_uris' && v && typeof v === 'object') {
      const subs: Json = {};
      for (const [name, uri] of Object.entries(v as Json)) subs[name] = twilioUri(uri);
      out[k] = subs;
    }
  }
  return out;
}

const nullOr = (v: unknown, f: (v: unknown) => unknown) => (v === null || v === undefined ? null : f(v));

function derive(d: Derivation, j: Json): unknown {
  if ('copy' in d) return j[d.copy];
  if ('text' in d) return nullOr(j[d.text], String);
  if ('number' in d) return nullOr(j[d.number], Number);
  if ('value' in d) return d.value;
  if ('rename' in d) {
    const v = j[d.rename];
    return typeof v === 'string' ? (d.values[v] ?? v) : v;
  }
  if ('pick' in d) {
    const from = (j[d.pick] ?? {}) as Json;
    return Object.fromEntries(Object.entries(d.members).map(([k, n]) => [k, from[n] ?? false]));
  }
  if ('when' in d) return j[d.kind] === d.is ? j[d.when] : null;
  if ('first' in d) return d.first.map((n) => j[n]).find((v) => v !== null && v !== undefined) ?? null;
  const base = `${TWILIO_ROOT}/Accounts/${String(j.sid)}`;
  return Object.fromEntries(TWILIO_SUBRESOURCES.map(([k, p]) => [k, `${base}/${p}.json`]));
}

const BY_ROOT = new Map<string, DialectRule>(
  DIALECT_RULES.flatMap((r) => r.roots.map((n) => [n, r] as const)),
);

/** Twilio's list keys where they differ from the native ones. */
const ITEMS_KEY = new Map(
  DIALECT_RULES.flatMap((r) => (r.listKey ? [[r.roots[1], r.listKey] as const] : [])),
);

function mapItem(root: string, item: unknown): unknown {
  if (!item || typeof item !== 'object') return item;
  const out = rewriteUris(item as Json);
  const rule = BY_ROOT.get(root);
  if (!rule) return out;
  const added: Json = {};
  for (const [name, d] of Object.entries(rule.members)) added[name] = derive(d, out);
  return { ...out, ...added };
}

/**
 * Twilio's page members and what each carries; `num_pages`, `total` and `last_page_uri` are gone
 * from its 2010 lists. A `link` that does not exist is JSON null.
 */
export const TWILIO_PAGE_MEMBERS: Readonly<Record<string, 'uri' | 'link' | 'count' | 'size'>> = {
  uri: 'uri',
  first_page_uri: 'uri',
  next_page_uri: 'link',
  previous_page_uri: 'link',
  page: 'count',
  page_size: 'size',
  start: 'count',
  end: 'count',
};

function twilioEnvelope(envelope: Record<string, string | number>): Json {
  const out: Json = {};
  for (const [name, kind] of Object.entries(TWILIO_PAGE_MEMBERS)) {
    out[name] = kind === 'uri' || kind === 'link' ? twilioUri(envelope[name]) : envelope[name];
  }
  return out;
}

export const twilioDialect: JsonDialect = {
  resource(res: Response, rootName: string, json: unknown): unknown {
    if (rootName === 'RestException') return json;
    if (Array.isArray(json)) {
      // Lists the native surface returns whole are paged here, as Twilio pages every list.
      const req = res.req;
      const page = parsePage(req);
      const items = json.slice(page.offset, page.offset + page.pageSize);
      const envelope = pageEnvelope({
        req,
        format: 'json',
        path: req.path,
        page,
        total: json.length,
        count: items.length,
      });
      return this.page(res, rootName, envelope, ITEMS_KEY.get(rootName) ?? rootName.toLowerCase(), items);
    }
    return mapItem(rootName, json);
  },
  page(_res, container, envelope, itemsKey, items): unknown {
    return { ...twilioEnvelope(envelope), [itemsKey]: items.map((i) => mapItem(container, i)) };
  },
};
