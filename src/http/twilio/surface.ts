/**
 * The Twilio compatibility surface: `/2010-04-01/Accounts/{sid}/…` for Calls, Messages,
 * IncomingPhoneNumbers, Recordings, Notifications and Applications (and the account itself). A
 * request is translated onto the native route (path, filters, `PageToken`, the few form members
 * whose names differ) and answered by the native handler; the JSON comes back through the Twilio
 * dialect (dialect.ts). Paths outside that list are left alone and end as the native 404.
 * See docs/twilio.md.
 */
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { parseFilterDate } from '../../dates.js';
import { AppError } from '../../errors.js';
import { state } from '../context.js';
import type { ParamSpec } from '../openapi/spec.js';
import { parseForm } from '../params.js';
import { API_ROOT } from '../uris.js';
import { TWILIO_ROOT, twilioDialect } from './dialect.js';

/** A resource of this surface: where it is served natively and which members differ. */
export interface TwilioResource {
  /** Native path segment(s) under the account. */
  readonly native: string;
  /** Twilio's date filter on lists (with its `<` and `>` forms), sent on as StartTime/EndTime. */
  readonly dateFilter?: string;
  /** Twilio form members without a native counterpart here: refused, naming the member. */
  readonly unsupported?: readonly string[];
  /** Twilio form members nativeForm translates into native ones, by operation. */
  readonly aliases?: { readonly create?: readonly ParamSpec[]; readonly update?: readonly ParamSpec[] };
}

const applicationAliases: readonly ParamSpec[] = [
  { name: 'VoiceUrl', type: 'url', description: 'Markup URL for voice: the application becomes Kind voice' },
  { name: 'VoiceMethod', enum: ['POST'] },
  { name: 'SmsUrl', type: 'url', description: 'Markup URL for SMS: the application becomes Kind sms' },
  { name: 'SmsMethod', enum: ['POST'] },
];

/**
 * The mapping table of this surface, by Twilio resource name. The router (twilioSurface), the
 * OpenAPI document (openapi/twilio.ts) and docs/twilio.md follow it.
 */
export const TWILIO_RESOURCES: Readonly<Record<string, TwilioResource>> = {
  Calls: {
    native: 'Calls',
    unsupported: ['Twiml', 'ApplicationSid', 'SendDigits', 'Record', 'MachineDetection', 'Trim', 'CallerId'],
  },
  Messages: {
    native: 'SMS/Messages',
    dateFilter: 'DateSent',
    unsupported: ['MessagingServiceSid', 'MediaUrl', 'ContentSid', 'ScheduleType', 'SendAt'],
  },
  IncomingPhoneNumbers: { native: 'IncomingPhoneNumbers' },
  Recordings: { native: 'Recordings', dateFilter: 'DateCreated' },
  Notifications: { native: 'Notifications', dateFilter: 'MessageDate' },
  Applications: {
    native: 'Applications',
    unsupported: [
      'VoiceFallbackUrl',
      'VoiceFallbackMethod',
      'SmsFallbackUrl',
      'SmsFallbackMethod',
      'StatusCallback',
      'StatusCallbackMethod',
      'SmsStatusCallback',
      'MessageStatusCallback',
      'PublicApplicationConnectEnabled',
    ],
    aliases: {
      create: [...applicationAliases, { name: 'VoiceCallerIdLookup', type: 'boolean' }],
      update: applicationAliases,
    },
  },
};

/** A Twilio date filter's forms → the native members each one sets. */
export const dateFilterForms = (name: string): ReadonlyArray<readonly [string, readonly string[]]> => [
  [name, ['StartTime', 'EndTime']],
  [`${name}>`, ['StartTime']],
  [`${name}<`, ['EndTime']],
];

/** The query member carrying Twilio's page cursor (`PA` + the sid the native AfterSid names). */
export const PAGE_TOKEN = 'PageToken';

/**
 * A native route template (`/2012-04-24/Accounts/:accountSid/SMS/Messages/:messageSid`) → the
 * template this surface answers for it, or null when the surface does not map onto it. The inverse
 * of nativePath, from the same table.
 */
export function twilioTemplate(native: string): { path: string; resource: string | null } | null {
  const account = `${API_ROOT}/Accounts/:accountSid`;
  const twilioAccount = `${TWILIO_ROOT}/Accounts/:accountSid`;
  if (native === account) return { path: twilioAccount, resource: null };
  for (const [name, r] of Object.entries(TWILIO_RESOURCES)) {
    const prefix = `${account}/${r.native}`;
    if (native === prefix || native.startsWith(`${prefix}/`)) {
      return { path: `${twilioAccount}/${name}${native.slice(prefix.length)}`, resource: name };
    }
  }
  return null;
}

const RESOURCE_SID = /^[A-Z]{2}[0-9a-f]{32}$/;

interface Mapped {
  readonly path: string;
  readonly resource: string | null;
  readonly json: boolean;
}

/** `/2010-04-01/Accounts/{sid}[/{Resource}[/…]][.json]` → the native path, or null. */
export function nativePath(path: string): Mapped | null {
  const segments = path.replace(/\/+$/, '').split('/');
  if (segments[1] !== TWILIO_ROOT.slice(1) || segments.length < 4) return null;
  let json = false;
  const bare = segments.map((s) => {
    if (s.length > 5 && s.endsWith('.json')) {
      json = true;
      return s.slice(0, -5);
    }
    return s;
  });
  if (bare[2] !== 'Accounts' || !bare[3]) return null;
  const [, , , sid, resource, ...rest] = bare;
  let native = `${API_ROOT}/Accounts/${sid}`;
  if (resource !== undefined) {
    const mapped = TWILIO_RESOURCES[resource];
    if (!mapped) return null;
    native += `/${[mapped.native, ...rest].join('/')}`;
  }
  return { path: json ? `${native}.json` : native, resource: resource ?? null, json };
}

/** Query members renamed for the native list; null when nothing needs renaming. */
function nativeQuery(query: string, resource: string | null): string | null {
  const q = new URLSearchParams(query);
  let changed = false;
  const token = q.get(PAGE_TOKEN);
  if (q.has(PAGE_TOKEN)) {
    q.delete(PAGE_TOKEN);
    // The native cursor is the sid of the previous page's last item; Page still decides the offset.
    if (token?.startsWith('PA')) q.set('AfterSid', token.slice(2));
    changed = true;
  }
  const date = resource ? TWILIO_RESOURCES[resource]?.dateFilter : undefined;
  if (date) {
    for (const [twilioName, nativeNames] of dateFilterForms(date)) {
      const v = q.get(twilioName);
      if (v === null) continue;
      if (!parseFilterDate(v)) {
        throw new AppError('InvalidParameter', `${twilioName} must be YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS`);
      }
      q.delete(twilioName);
      for (const n of nativeNames) q.set(n, v);
      changed = true;
    }
  }
  return changed ? q.toString() : null;
}

/** Renames Twilio form members to the native ones; throws for members that cannot be honoured. */
export function nativeForm(
  form: ReadonlyMap<string, readonly string[]>,
  resource: string,
  create: boolean,
): Map<string, readonly string[]> {
  const out = new Map(form);
  for (const name of TWILIO_RESOURCES[resource]?.unsupported ?? []) {
    if (out.has(name)) {
      throw new AppError('InvalidParameter', `${name} is not supported on ${TWILIO_ROOT}/…/${resource}`);
    }
  }
  const events = out.get('StatusCallbackEvent');
  // The SDK repeats the member once per event; the native parser reads one space-separated list.
  if (resource === 'Calls' && events && events.length > 1) out.set('StatusCallbackEvent', [events.join(' ')]);
  if (resource !== 'Applications') return out;
  // A native application has one markup URL (RcmlUrl) and a Kind; it is fetched with POST.
  for (const m of ['VoiceMethod', 'SmsMethod']) {
    const v = out.get(m)?.[0];
    if (v !== undefined && v.toUpperCase() !== 'POST') {
      throw new AppError('InvalidParameter', `${m} must be POST: applications fetch their markup with POST`);
    }
    out.delete(m);
  }
  const voice = out.get('VoiceUrl');
  const sms = out.get('SmsUrl');
  if (voice && sms && voice[0] !== '' && sms[0] !== '') {
    throw new AppError(
      'InvalidParameter',
      'Give VoiceUrl or SmsUrl, not both: an application here serves one kind of traffic',
    );
  }
  out.delete('VoiceUrl');
  out.delete('SmsUrl');
  // The non-empty one names the kind; both empty clears the URL and keeps the kind.
  const kind = voice?.[0] ? 'voice' : sms?.[0] ? 'sms' : undefined;
  const url = kind === 'voice' ? voice : kind === 'sms' ? sms : (voice ?? sms);
  if (url) out.set('RcmlUrl', url);
  if (!out.has('Kind') && (kind || (create && url))) out.set('Kind', [kind ?? 'voice']);
  const lookup = out.get('VoiceCallerIdLookup');
  if (create && lookup) {
    out.delete('VoiceCallerIdLookup');
    out.set('HasVoiceCallerIdLookup', lookup);
  }
  return out;
}

function serialize(form: ReadonlyMap<string, readonly string[]>): string {
  const q = new URLSearchParams();
  for (const [k, values] of form) for (const v of values) q.append(k, v);
  return q.toString();
}

/**
 * Express middleware placed before the native one. Requests under `/2010-04-01` are rewritten onto
 * the native routes and marked with the Twilio dialect; a form body is read here (once, within the
 * same size limit) so its members can be renamed before the native parser sees them.
 */
export function twilioSurface(opts: { readonly bodyLimit: number }): RequestHandler {
  const formText = express.text({ type: 'application/x-www-form-urlencoded', limit: opts.bodyLimit });
  return (req: Request, res: Response, next: NextFunction) => {
    if (!req.url.startsWith(`${TWILIO_ROOT}/`)) return next();
    const q = req.url.indexOf('?');
    const mapped = nativePath(q === -1 ? req.url : req.url.slice(0, q));
    if (!mapped) return next();
    state(res).dialect = twilioDialect;
    // Errors raised here are rendered before the native format negotiation runs.
    state(res).format = mapped.json ? 'json' : 'xml';
    const query = q === -1 ? '' : req.url.slice(q + 1);
    let translated: string | null;
    try {
      translated = nativeQuery(query, mapped.resource);
    } catch (e) {
      return next(e);
    }
    req.url = mapped.path + (translated !== null ? `?${translated}` : query ? `?${query}` : '');
    const resource = mapped.resource;
    if (!resource || (req.method !== 'POST' && req.method !== 'PUT')) return next();
    formText(req, res, (err?: unknown) => {
      if (err) return next(err);
      try {
        const form = parseForm(typeof req.body === 'string' ? req.body : '');
        // A POST on a list creates; a POST on `…/{Sid}` updates.
        const last =
          mapped.path
            .replace(/\.json$/, '')
            .split('/')
            .at(-1) ?? '';
        const native = nativeForm(form, resource, !RESOURCE_SID.test(last));
        if (typeof req.body === 'string') req.body = serialize(native);
        next();
      } catch (e) {
        next(e);
      }
    });
  };
}
