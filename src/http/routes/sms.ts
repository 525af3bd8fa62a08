/**
 * SMS (spec §Endpoints › SMS): send (`POST /SMS/Messages`, answers with status sending — or queued
 * while no SMSC is bound), list with Page, PageSize, To, From, StartTime, EndTime, Body (partial
 * match) and SortBy, get one. A ProvisioningAgent never sees message text (spec §Authentication 4):
 * Body is null in its representations and it may not filter or sort by Body.
 */
import type { Request, Response } from 'express';
import type { SmsService } from '../../actors/sms/sms-service.js';
import { AppError } from '../../errors.js';
import { Role } from '../../store/account-store.js';
import { SMS_SORT, type SmsStore } from '../../store/sms-store.js';
import { accountOf, callerOf, formatOf } from '../context.js';
import { one, page, type RouteSpec } from '../openapi/spec.js';
import { pageEnvelope, parsePage, parseSort } from '../paging.js';
import { Params } from '../params.js';
import { Items, send, sendPage } from '../render.js';
import type { RouteTable } from '../router.js';
import { smsDto } from '../serializers/sms.js';
import { API_ROOT } from '../uris.js';
import { urlParam } from '../validate.js';
import { dateRange } from './notifications.js';

/** Dependencies of the SMS routes. */
export interface SmsRouteDeps {
  readonly sms: SmsService;
  readonly smsStore: SmsStore;
  readonly publicUrl: string;
}

/** Registers `/SMS/Messages` and `/SMS/Messages/{MessageSid}`. */
export function smsRoutes(routes: RouteTable, deps: SmsRouteDeps): void {
  const base = `${API_ROOT}/Accounts/:accountSid/SMS/Messages`;
  const mayReadText = (res: Response) => callerOf(res).role !== Role.ProvisioningAgent;

  const create = async (_req: Request, res: Response) => {
    const account = accountOf(res);
    const p = Params.body(res);
    const from = p.required('From');
    const to = p.required('To');
    const body = p.get('Body');
    if (body === undefined || body === '') throw new AppError('SmsBodyRequired', 'Body is required');
    const statusCallback = urlParam(p, 'StatusCallback') ?? null;
    const m = await deps.sms.send({ account, from, to, body, statusCallback });
    const location = `${deps.publicUrl}${API_ROOT}/Accounts/${account.sid}/SMS/Messages/${m.sid}`;
    // Given to writeHead rather than setHeader: the response then keeps no header map.
    send(res, formatOf(res), 'SMSMessage', smsDto(m, formatOf(res), mayReadText(res)), 201, [
      'Location',
      location,
    ]);
  };

  const list = async (req: Request, res: Response) => {
    const account = accountOf(res);
    const q = Params.query(req);
    const page = parsePage(req);
    const sort = parseSort(req, SMS_SORT, 'DateCreated');
    const range = dateRange(q);
    const body = q.get('Body');
    if (!mayReadText(res) && (body !== undefined || sort.by === 'Body')) {
      throw new AppError('Forbidden', 'A ProvisioningAgent may not filter or sort messages by their text');
    }
    const { total, items } = await deps.smsStore.list(
      {
        accountSid: account.sid,
        to: q.get('To'),
        from: q.get('From'),
        startTime: range.start,
        endTime: range.end,
        body: body === '' ? undefined : body,
      },
      sort,
      { offset: page.offset, limit: page.pageSize },
    );
    const format = formatOf(res);
    const withBody = mayReadText(res);
    sendPage(
      res,
      format,
      'SMSMessages',
      new Items(
        'SMSMessage',
        items.map((m) => smsDto(m, format, withBody)),
      ),
      pageEnvelope({
        req,
        format,
        path: `${API_ROOT}/Accounts/${account.sid}/SMS/Messages`,
        page,
        total,
        count: items.length,
        lastSid: items.at(-1)?.sid,
      }),
      'messages',
    );
  };

  routes.resource(base, { GET: list, POST: create });
  routes.resource(`${base}/:messageSid`, {
    GET: async (req, res) => {
      const sid = req.params.messageSid as string;
      const m = await deps.smsStore.get(accountOf(res).sid, sid);
      if (!m) throw new AppError('NotFound', `SMS message ${sid} not found`);
      send(res, formatOf(res), 'SMSMessage', smsDto(m, formatOf(res), mayReadText(res)));
    },
  });

  routes.describe(base, SMS_LIST_SPEC);
  routes.describe(`${base}/:messageSid`, SMS_SPEC);
}

const SMS_LIST_SPEC: RouteSpec = {
  tag: 'SMS',
  GET: {
    summary: 'List SMS messages',
    params: [
      { name: 'To' },
      { name: 'From' },
      { name: 'StartTime', type: 'date' },
      { name: 'EndTime', type: 'date' },
      { name: 'Body', description: 'Text the body contains (not for a ProvisioningAgent)' },
      { name: 'SortBy', description: `<attribute>:<asc|desc>, attribute one of ${SMS_SORT.join(', ')}` },
    ],
    response: page('SmsMessage', 'messages'),
  },
  POST: {
    summary: 'Send an SMS message',
    params: [
      { name: 'From', required: true, description: 'An SMS-capable number of the account' },
      { name: 'To', required: true, description: 'E.164 number, short code or `client:<login>`' },
      { name: 'Body', required: 'handler', description: 'Up to 1,600 characters (21602 when missing)' },
      { name: 'StatusCallback', type: 'url' },
    ],
    response: one('SmsMessage', 201),
  },
};

const SMS_SPEC: RouteSpec = {
  tag: 'SMS',
  GET: { summary: 'Get an SMS message', response: one('SmsMessage') },
};
