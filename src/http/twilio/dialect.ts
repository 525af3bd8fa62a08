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

function rewriteUris(json: Json): Json {
  const out: Json = { ...json };
  for (const [k, v] of Object.entries(out)) {
    if (k === 'uri' || k.endsWith('_uri') || k.endsWith('_url')) out[k] = twilioUri(v);
    else if (k === 'subresource_uris' && v && typeof v === 'object') {
      const subs: Json = {};
      for (const [name, uri] of Object.entries(v as Json)) subs[name] = twilioUri(uri);
      out[k] = subs;
    }
  }
  return out;
}

const str = (v: unknown) => (v === null || v === undefined ? null : String(v));

function call(j: Json): Json {
  return {
    ...rewriteUris(j),
    to_formatted: j.to,
    from_formatted: j.from,
    // Twilio types these as strings.
    duration: str(j.duration),
    queue_time: '0',
    group_sid: null,
    trunk_sid: null,
  };
}

function message(j: Json): Json {
  return {
    ...rewriteUris(j),
    direction: j.direction === 'incoming' ? 'inbound' : j.direction,
    error_code: j.error_code === null || j.error_code === undefined ? null : Number(j.error_code),
    num_media: '0',
    messaging_service_sid: null,
  };
}

function incomingNumber(j: Json): Json {
  const caps = (j.capabilities ?? {}) as Json;
  return {
    ...rewriteUris(j),
    capabilities: {
      voice: caps.voice_capable ?? false,
      sms: caps.sms_capable ?? false,
      mms: caps.mms_capable ?? false,
      fax: caps.fax_capable ?? false,
    },
    status: 'in-use',
  };
}

function recording(j: Json): Json {
  const out = rewriteUris(j);
  return {
    ...out,
    media_url: out.file_uri,
    start_time: j.date_created,
    duration: str(j.duration),
    status: 'completed',
    channels: 1,
    conference_sid: null,
  };
}

/** Native applications have one markup URL and a Kind; Twilio's have one URL per channel. */
function application(j: Json): Json {
  return {
    ...rewriteUris(j),
    voice_url: j.kind === 'voice' ? j.rcml_url : null,
    voice_method: 'POST',
    sms_url: j.kind === 'sms' ? j.rcml_url : null,
    sms_method: 'POST',
  };
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

function account(j: Json): Json {
  const base = `${TWILIO_ROOT}/Accounts/${String(j.sid)}`;
  return {
    ...rewriteUris(j),
    owner_account_sid: j.parent_sid ?? j.sid,
    subresource_uris: Object.fromEntries(TWILIO_SUBRESOURCES.map(([k, p]) => [k, `${base}/${p}.json`])),
  };
}

const BY_ROOT: Record<string, (j: Json) => Json> = {
  Call: call,
  Calls: call,
  SMSMessage: message,
  SMSMessages: message,
  IncomingPhoneNumber: incomingNumber,
  IncomingPhoneNumbers: incomingNumber,
  Recording: recording,
  Recordings: recording,
  Application: application,
  Applications: application,
  Account: account,
  Accounts: account,
};

/** Twilio's list keys where they differ from the native ones. */
const ITEMS_KEY: Record<string, string> = {
  IncomingPhoneNumbers: 'incoming_phone_numbers',
  Applications: 'applications',
  Accounts: 'accounts',
};

function mapItem(root: string, item: unknown): unknown {
  if (!item || typeof item !== 'object') return item;
  const fn = BY_ROOT[root];
  return fn ? fn(item as Json) : rewriteUris(item as Json);
}

/** Twilio's page members; `num_pages`, `total` and `last_page_uri` are gone from its 2010 lists. */
function twilioEnvelope(envelope: Record<string, string | number>): Json {
  return {
    uri: twilioUri(envelope.uri),
    first_page_uri: twilioUri(envelope.first_page_uri),
    next_page_uri: twilioUri(envelope.next_page_uri),
    previous_page_uri: twilioUri(envelope.previous_page_uri),
    page: envelope.page,
    page_size: envelope.page_size,
    start: envelope.start,
    end: envelope.end,
  };
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
      return this.page(res, rootName, envelope, ITEMS_KEY[rootName] ?? rootName.toLowerCase(), items);
    }
    return mapItem(rootName, json);
  },
  page(_res, container, envelope, itemsKey, items): unknown {
    return { ...twilioEnvelope(envelope), [itemsKey]: items.map((i) => mapItem(container, i)) };
  },
};
