/**
 * Notifications (spec §Endpoints › Notifications): list (account-wide and per call) with StartTime,
 * EndTime, ErrorCode, RequestUrl, MessageText (contains), Page, PageSize, Limit (cap on total,
 * default 10000) and SortBy; get one.
 */
import type { Request, Response } from 'express';
import { parseFilterDate } from '../../dates.js';
import { AppError } from '../../errors.js';
import { Role } from '../../store/account-store.js';
import { NOTIFICATION_SORT, type NotificationStore } from '../../store/notification-store.js';
import { accountOf, callerOf, formatOf } from '../context.js';
import { one, page, type RouteSpec } from '../openapi/spec.js';
import { pageEnvelope, parsePage, parseSort } from '../paging.js';
import { Params } from '../params.js';
import { Items, send, sendPage } from '../render.js';
import type { RouteTable } from '../router.js';
import { notificationDto } from '../serializers/records.js';
import { API_ROOT } from '../uris.js';

export const DEFAULT_NOTIFICATION_LIMIT = 10_000;

export interface NotificationRouteDeps {
  readonly notifications: NotificationStore;
}

/** StartTime/EndTime: `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM:SS`, inclusive, UTC; a date alone as EndTime is the whole day. */
export function dateRange(q: Params): { start?: Date; end?: Date } {
  const out: { start?: Date; end?: Date } = {};
  for (const name of ['StartTime', 'EndTime'] as const) {
    const v = q.get(name);
    if (v === undefined) continue;
    const d = parseFilterDate(v);
    if (!d) throw new AppError('InvalidParameter', `${name} must be YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS`);
    if (name === 'StartTime') out.start = d;
    else out.end = /^\d{4}-\d{2}-\d{2}$/.test(v) ? new Date(d.getTime() + 86_399_999) : d;
  }
  return out;
}

/** A ProvisioningAgent may not read message text (spec §Authentication 4), not even in request variables. */
const mayReadText = (res: Response) => callerOf(res).role !== Role.ProvisioningAgent;

export function notificationRoutes(routes: RouteTable, deps: NotificationRouteDeps): void {
  const list = (byCall: boolean) => async (req: Request, res: Response) => {
    const account = accountOf(res);
    const q = Params.query(req);
    const page = parsePage(req);
    const sort = parseSort(req, NOTIFICATION_SORT, 'DateCreated');
    const limit = q.int('Limit', 1, 1_000_000) ?? DEFAULT_NOTIFICATION_LIMIT;
    const range = dateRange(q);
    const callSid = byCall ? (req.params.callSid as string) : undefined;
    const { total, items } = await deps.notifications.list(
      {
        accountSid: account.sid,
        callSid,
        startTime: range.start,
        endTime: range.end,
        errorCode: q.int('ErrorCode', 0, 999_999),
        requestUrl: q.get('RequestUrl'),
        messageText: q.get('MessageText'),
      },
      sort,
      { offset: page.offset, limit: page.pageSize },
      limit,
    );
    const format = formatOf(res);
    const path = `${API_ROOT}/Accounts/${account.sid}${callSid ? `/Calls/${callSid}` : ''}/Notifications`;
    sendPage(
      res,
      format,
      'Notifications',
      new Items(
        'Notification',
        items.map((n) => notificationDto(n, format, mayReadText(res))),
      ),
      pageEnvelope({
        req,
        format,
        path,
        page,
        total,
        count: items.length,
        lastSid: items.at(-1)?.sid,
        extra: { limit },
      }),
      'notifications',
    );
  };

  routes.resource(`${API_ROOT}/Accounts/:accountSid/Notifications`, { GET: list(false) });
  routes.resource(`${API_ROOT}/Accounts/:accountSid/Calls/:callSid/Notifications`, { GET: list(true) });
  routes.resource(`${API_ROOT}/Accounts/:accountSid/Notifications/:notificationSid`, {
    GET: async (req, res) => {
      const n = await deps.notifications.get(accountOf(res).sid, req.params.notificationSid as string);
      if (!n) throw new AppError('NotFound', `Notification ${req.params.notificationSid} not found`);
      send(res, formatOf(res), 'Notification', notificationDto(n, formatOf(res), mayReadText(res)));
    },
  });

  routes.describe(`${API_ROOT}/Accounts/:accountSid/Notifications`, notificationsSpec(false));
  routes.describe(`${API_ROOT}/Accounts/:accountSid/Calls/:callSid/Notifications`, notificationsSpec(true));
  routes.describe(`${API_ROOT}/Accounts/:accountSid/Notifications/:notificationSid`, NOTIFICATION_SPEC);
}

function notificationsSpec(byCall: boolean): RouteSpec {
  return {
    tag: 'Notifications',
    GET: {
      summary: byCall ? "List a call's notifications" : 'List notifications',
      params: [
        { name: 'StartTime', type: 'date' },
        { name: 'EndTime', type: 'date' },
        { name: 'ErrorCode', type: 'integer' },
        { name: 'RequestUrl' },
        { name: 'MessageText' },
        { name: 'Limit', type: 'integer', description: 'Most notifications counted (1 to 1,000,000)' },
        {
          name: 'SortBy',
          description: `<attribute>:<asc|desc>, attribute one of ${NOTIFICATION_SORT.join(', ')}`,
        },
      ],
      response: page('Notification', 'notifications'),
    },
  };
}

const NOTIFICATION_SPEC: RouteSpec = {
  tag: 'Notifications',
  GET: { summary: 'Get a notification', response: one('Notification') },
};
