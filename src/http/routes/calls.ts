/**
 * Calls endpoints (spec §Endpoints › Calls): list with To, From, Status, StartTime filters and the
 * paging envelope (items under `calls`, most recent first), and get one. Creating and modifying calls
 * is added by the call runtime.
 */
import type { Request } from 'express';
import { parseFilterDate } from '../../dates.js';
import { AppError } from '../../errors.js';
import { CALL_STATUSES, type CallStore } from '../../store/call-store.js';
import { accountOf, formatOf } from '../context.js';
import { pageEnvelope, parsePage } from '../paging.js';
import { Params } from '../params.js';
import { Items, send, sendPage } from '../render.js';
import type { RouteTable } from '../router.js';
import { callDto } from '../serializers/call.js';
import { API_ROOT } from '../uris.js';

export interface CallRouteDeps {
  readonly calls: CallStore;
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
  routes.resource(`${API_ROOT}/Accounts/:accountSid/Calls`, {
    GET: async (req, res) => {
      const account = accountOf(res);
      const q = Params.query(req);
      const page = parsePage(req);
      const range = startTimeRange(req);
      const { total, items } = await deps.calls.list(
        {
          accountSid: account.sid,
          to: q.get('To'),
          from: q.get('From'),
          status: q.oneOf('Status', CALL_STATUSES),
          startTimeFrom: range.from,
          startTimeTo: range.to,
          parentCallSid: q.get('ParentCallSid'),
        },
        { offset: page.offset, limit: page.pageSize },
      );
      const format = formatOf(res);
      sendPage(
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
    },
  });

  routes.resource(`${API_ROOT}/Accounts/:accountSid/Calls/:callSid`, {
    GET: async (req, res) => {
      const call = await deps.calls.get(accountOf(res).sid, req.params.callSid as string);
      if (!call) throw new AppError('NotFound', `Call ${req.params.callSid} not found`);
      send(res, formatOf(res), 'Call', callDto(call, formatOf(res)));
    },
  });
}
