/**
 * Calls endpoints (spec §Endpoints › Calls): list with To, From, Status, StartTime filters and the
 * paging envelope (items under `calls`, most recent first), get one, create a call (`POST /Calls`,
 * answered with status queued once the record is written) and modify a live one
 * (`POST /Calls/{sid}`: Status=canceled|completed). See docs/calls.md.
 */

import type { Request } from 'express';
import { DEFAULT_RING_TIMEOUT_SECONDS } from '../../actors/call/call.machine.js';
import type { CallCommands, CommandView } from '../../actors/call/call-commands.js';
import type { CallRuntime, OutboundCallRequest } from '../../actors/call/call-runtime.js';
import { parseProgressEvents } from '../../actors/call/status-callbacks.js';
import { parseFilterDate } from '../../dates.js';
import { AppError } from '../../errors.js';
import { AddressKind } from '../../numbers/address.js';
import { CALL_STATUSES, type CallStore, TERMINAL_CALL_STATUSES } from '../../store/call-store.js';
import type { CallerIdStore } from '../../store/caller-id-store.js';
import type { NumberStore } from '../../store/number-store.js';
import { addressParam } from '../address-param.js';
import { accountOf, formatOf } from '../context.js';
import { one, page, type RouteSpec } from '../openapi/spec.js';
import { PageCache } from '../page-cache.js';
import { pageEnvelope, parsePage } from '../paging.js';
import { Params } from '../params.js';
import { hasDialect, Items, renderPage, send, writeBody } from '../render.js';
import type { RouteTable } from '../router.js';
import { callDto } from '../serializers/call.js';
import { API_ROOT, API_VERSION } from '../uris.js';
import { methodParam, urlParam } from '../validate.js';

export interface CallRouteDeps {
  readonly calls: CallStore;
  readonly numbers: NumberStore;
  readonly callerIds: CallerIdStore;
  readonly callerIdPolicy: 'open' | 'verified';
  /** The call runtime; null when SIP is disabled (creating and modifying calls answer 503). */
  readonly callRuntime: CallRuntime | null;
  /** Live-call commands, applied here or forwarded to the node that runs the call. */
  readonly callCommands: CallCommands | null;
  readonly publicUrl: string;
}

/** Twilio's limit on Timeout (seconds). */
const MAX_TIMEOUT = 600;

function commandsOf(deps: CallRouteDeps): CallCommands {
  if (!deps.callCommands) throw new AppError('Unavailable', 'Calls are not available: SIP is disabled');
  return deps.callCommands;
}

function runtimeOf(deps: CallRouteDeps): CallRuntime {
  if (!deps.callRuntime) throw new AppError('Unavailable', 'Calls are not available: SIP is disabled');
  return deps.callRuntime;
}

/**
 * Members added to the call when Mute was given (spec §Calls: the response carries ConferenceSid,
 * Muted, Hold, StartConferenceOnEnter, EndConferenceOnEnter; decisions.md). ConferenceSid is the
 * conference the call is mixed in (null while it waits for the start, or outside any).
 */
function modificationExtras(live: CommandView | null) {
  return {
    ConferenceSid: live?.room ? (live.conferenceSid ?? null) : null,
    Muted: live?.muted ?? false,
    Hold: live?.hold ?? false,
    StartConferenceOnEnter: live?.startConferenceOnEnter ?? true,
    EndConferenceOnEnter: live?.endConferenceOnEnter ?? false,
  };
}

/** A caller id is a number or a client (spec §Calls: "phone number used as caller id"). */
const CALL_FROM_FORMS = [
  AddressKind.E164,
  AddressKind.ShortCode,
  AddressKind.Digits,
  AddressKind.Client,
] as const;

/** Validates `POST /Calls` (spec §Calls create parameters). */
function outboundRequest(p: Params, accountSid: string, apiVersion: string): OutboundCallRequest {
  const from = p.get('From');
  const to = p.get('To');
  if (!from) throw new AppError('MissingParameter', 'From is required');
  if (!to) throw new AppError('MissingParameter', 'To is required');
  const url = urlParam(p, 'Url');
  if (!url) throw new AppError('MissingParameter', 'Url is required');
  const events = parseProgressEvents(p.all('StatusCallbackEvent'));
  if (!events.ok)
    throw new AppError(
      'InvalidParameter',
      `StatusCallbackEvent: unknown event "${events.unknown}" (initiated, ringing, answered, completed)`,
    );
  addressParam('From', from, CALL_FROM_FORMS);
  return {
    accountSid,
    apiVersion,
    from,
    to,
    url,
    method: methodParam(p, 'Method') ?? 'POST',
    fallbackUrl: urlParam(p, 'FallbackUrl') ?? null,
    fallbackMethod: methodParam(p, 'FallbackMethod') ?? 'POST',
    statusCallback: urlParam(p, 'StatusCallback') ?? null,
    statusCallbackMethod: methodParam(p, 'StatusCallbackMethod') ?? 'POST',
    statusCallbackEvents: events.events,
    timeoutSeconds: p.int('Timeout', 1, MAX_TIMEOUT) ?? DEFAULT_RING_TIMEOUT_SECONDS,
  };
}

/**
 * With CALLER_ID_POLICY=verified, any From but a `client:` must be an E.164 number the account owns
 * or lists as an outgoing caller id, as Twilio requires; `open` keeps any well-formed From.
 */
async function checkCallerId(deps: CallRouteDeps, accountSid: string, from: string): Promise<void> {
  if (deps.callerIdPolicy === 'open' || from.startsWith('client:')) return;
  const owned = (await deps.numbers.findByNumber(from))?.accountSid === accountSid;
  if (owned || (await deps.callerIds.has(accountSid, from))) return;
  throw new AppError(
    'CallerIdNotVerified',
    `From ${from} is neither an incoming phone number of this account nor one of its OutgoingCallerIds`,
  );
}

function dateFilter(q: Params, name: string): Date | undefined {
  const v = q.get(name);
  if (v === undefined) return undefined;
  const d = parseFilterDate(v);
  if (!d)
    throw new AppError(
      'InvalidParameter',
      `${name} must be an ISO 8601 date (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS)`,
    );
  return d;
}

/** `StartTime=2013-07-05` is the whole UTC day (inclusive), `StartTime=...T10:00:00` that instant onwards. */
function startTimeRange(req: Request): { from?: Date; to?: Date } {
  const q = Params.query(req);
  const exact = q.get('StartTime');
  const out: { from?: Date; to?: Date } = {};
  const from = dateFilter(q, 'StartTime') ?? dateFilter(q, 'StartTime>');
  const to = dateFilter(q, 'StartTime<') ?? dateFilter(q, 'EndTime');
  if (from) out.from = from;
  if (to) out.to = to;
  if (exact && /^\d{4}-\d{2}-\d{2}$/.test(exact) && from) out.to = new Date(from.getTime() + 86_399_999);
  return out;
}

export function callRoutes(routes: RouteTable, deps: CallRouteDeps): void {
  // Rendered pages, served again while the account's calls are unchanged (see page-cache.ts).
  const pages = new PageCache();
  routes.resource(`${API_ROOT}/Accounts/:accountSid/Calls`, {
    GET: async (req, res) => {
      const account = accountOf(res);
      const q = Params.query(req);
      const page = parsePage(req);
      const range = startTimeRange(req);
      const filter = {
        accountSid: account.sid,
        to: q.get('To'),
        from: q.get('From'),
        status: q.oneOf('Status', CALL_STATUSES),
        startTimeFrom: range.from,
        startTimeTo: range.to,
        parentCallSid: q.get('ParentCallSid'),
      };
      const format = formatOf(res);
      // The body depends on the account, the format and the query (filters, paging) only; another
      // surface's dialect reshapes per request and is not kept.
      const key = hasDialect(res) ? null : `${account.sid} ${format} ${req.url}`;
      if (key !== null) {
        const kept = await pages.lookup(key, () => deps.calls.listVersion(account.sid));
        if (kept !== null) {
          writeBody(res, format, kept);
          return;
        }
      }
      const { total, items, version } = await deps.calls.list(filter, {
        offset: page.offset,
        limit: page.pageSize,
      });
      const body = renderPage(
        res,
        format,
        'Calls',
        new Items(
          'Call',
          items.map((c) => callDto(c, format)),
        ),
        pageEnvelope({
          req,
          format,
          path: `${API_ROOT}/Accounts/${account.sid}/Calls`,
          page,
          total,
          count: items.length,
          lastSid: items.at(-1)?.sid,
        }),
        'calls',
      );
      if (key === null) {
        writeBody(res, format, body);
        return;
      }
      const bytes = Buffer.from(body);
      pages.store(key, version, bytes);
      writeBody(res, format, bytes);
    },
    POST: async (_req, res) => {
      const account = accountOf(res);
      const request = outboundRequest(Params.body(res), account.sid, API_VERSION);
      await checkCallerId(deps, account.sid, request.from);
      const record = await runtimeOf(deps).createOutbound(request);
      const format = formatOf(res);
      res.setHeader('Location', `${deps.publicUrl}${API_ROOT}/Accounts/${account.sid}/Calls/${record.sid}`);
      send(res, format, 'Call', callDto(record, format), 201);
    },
  });

  routes.resource(`${API_ROOT}/Accounts/:accountSid/Calls/:callSid`, {
    GET: async (req, res) => {
      const sid = req.params.callSid as string;
      const call = await deps.calls.get(accountOf(res).sid, sid);
      if (!call) throw new AppError('NotFound', `Call ${sid} not found`);
      // A live call is read from its actor (the record follows it a moment later).
      const live = deps.callRuntime?.liveFields(sid) ?? null;
      send(res, formatOf(res), 'Call', callDto(live ? { ...call, ...live } : call, formatOf(res)));
    },
    POST: async (req, res) => {
      const sid = req.params.callSid as string;
      const account = accountOf(res);
      const call = await deps.calls.get(account.sid, sid);
      if (!call) throw new AppError('NotFound', `Call ${sid} not found`);
      const p = Params.body(res);
      const status = p.oneOf('Status', ['canceled', 'completed'] as const);
      const url = urlParam(p, 'Url') ?? undefined;
      const mute = p.bool('Mute');
      const statusCallback = urlParam(p, 'StatusCallback') ?? undefined;
      const move = p.bool('MoveConnectedCallLeg') ?? false;
      const target = url && {
        url,
        method: methodParam(p, 'Method') ?? 'POST',
        fallbackUrl: urlParam(p, 'FallbackUrl') ?? null,
        fallbackMethod: methodParam(p, 'FallbackMethod') ?? 'POST',
      };
      if (status === undefined && !target && mute === undefined && statusCallback === undefined)
        throw new AppError('MissingParameter', 'One of Url, Status, Mute or StatusCallback is required');
      if (move && !target) throw new AppError('MissingParameter', 'MoveConnectedCallLeg needs a Url');
      if (TERMINAL_CALL_STATUSES.includes(call.status))
        throw new AppError('Conflict', `Call ${sid} is not live (status ${call.status})`);
      const answer = await commandsOf(deps).run({
        sid,
        status,
        target: target || undefined,
        move,
        mute,
        endCallback: statusCallback
          ? { url: statusCallback, method: methodParam(p, 'StatusCallbackMethod') ?? 'POST' }
          : undefined,
      });
      if (answer.outcome === 'not-live') throw new AppError('Conflict', `Call ${sid} is not live`);
      if (answer.outcome === 'not-answered')
        throw new AppError('Conflict', `Call ${sid} cannot be redirected before it is answered`);
      if (answer.outcome === 'owner-unreachable') {
        res.setHeader('Retry-After', '2');
        throw new AppError('Unavailable', `The node running call ${sid} does not answer; retry shortly`);
      }
      const stored = (await deps.calls.get(account.sid, sid)) ?? call;
      const f = answer.fields;
      const after = f
        ? {
            ...stored,
            status: f.status,
            startTime: f.startTime === null ? null : new Date(f.startTime),
            sipResponseCode: f.sipResponseCode,
            ...(f.endTime !== undefined ? { endTime: new Date(f.endTime) } : {}),
            ...(f.duration !== undefined ? { duration: f.duration } : {}),
          }
        : stored;
      const format = formatOf(res);
      send(
        res,
        format,
        'Call',
        callDto(after, format, mute === undefined ? {} : modificationExtras(answer.view)),
      );
    },
  });

  routes.describe(`${API_ROOT}/Accounts/:accountSid/Calls`, CALLS_SPEC);
  routes.describe(`${API_ROOT}/Accounts/:accountSid/Calls/:callSid`, CALL_SPEC);
}

const CALLS_SPEC: RouteSpec = {
  tag: 'Calls',
  GET: {
    summary: 'List calls',
    description:
      'Most recent first. `StartTime>`/`StartTime<` bound the start time; a date alone is the whole UTC day.',
    params: [
      { name: 'To' },
      { name: 'From' },
      { name: 'Status', enum: CALL_STATUSES },
      { name: 'StartTime', type: 'date' },
      { name: 'EndTime', type: 'date' },
      { name: 'ParentCallSid', type: 'sid' },
    ],
    response: page('Call', 'calls'),
  },
  POST: {
    summary: 'Create a call',
    description:
      'Answers 201 with status `queued` once the call is recorded; progress arrives on StatusCallback.',
    params: [
      { name: 'From', required: true, description: 'Caller id (number or SIP URI)' },
      { name: 'To', required: true, description: 'E.164 number, `client:<login>` or a SIP URI' },
      { name: 'Url', type: 'url', required: true, description: 'Markup fetched when the call answers' },
      { name: 'Method', type: 'method' },
      { name: 'FallbackUrl', type: 'url' },
      { name: 'FallbackMethod', type: 'method' },
      { name: 'StatusCallback', type: 'url' },
      { name: 'StatusCallbackMethod', type: 'method' },
      {
        name: 'StatusCallbackEvent',
        repeated: true,
        description: 'initiated, ringing, answered, completed (repeated or space-separated)',
      },
      { name: 'Timeout', type: 'integer', description: `Ring timeout in seconds (1 to ${MAX_TIMEOUT})` },
    ],
    response: one('Call', 201),
  },
};

const CALL_SPEC: RouteSpec = {
  tag: 'Calls',
  GET: { summary: 'Get a call', response: one('Call') },
  POST: {
    summary: 'Modify a live call',
    description:
      'Redirect (Url), end (Status), mute, or set the end callback: one of Url, Status, Mute or StatusCallback is required.',
    params: [
      { name: 'Url', type: 'url' },
      { name: 'Method', type: 'method' },
      { name: 'FallbackUrl', type: 'url' },
      { name: 'FallbackMethod', type: 'method' },
      { name: 'Status', enum: ['canceled', 'completed'] },
      { name: 'Mute', type: 'boolean' },
      { name: 'StatusCallback', type: 'url' },
      { name: 'StatusCallbackMethod', type: 'method' },
      { name: 'MoveConnectedCallLeg', type: 'boolean' },
    ],
    response: one('Call'),
  },
};
