/**
 * OutgoingCallerIds: numbers an account may present as From without owning them here (its office
 * line, a mobile). Created directly, as Restcomm does; with CALLER_ID_POLICY=verified, REST calls take
 * an E.164 From only when it is one of these or one of the account's incoming numbers.
 */
import type { Request, Response } from 'express';
import { AppError } from '../../errors.js';
import { newSid, SidPrefix } from '../../ids.js';
import { AddressKind, formatNumber } from '../../numbers/address.js';
import type { CallerIdStore, OutgoingCallerId } from '../../store/caller-id-store.js';
import { addressParam } from '../address-param.js';
import { accountOf, formatOf } from '../context.js';
import { empty, list, one, type RouteSpec } from '../openapi/spec.js';
import { Params } from '../params.js';
import { Items, send } from '../render.js';
import type { RouteTable } from '../router.js';
import { outgoingCallerIdDto } from '../serializers/outgoing-caller-id.js';
import { API_ROOT } from '../uris.js';
import { friendlyNameParam } from '../validate.js';

export interface CallerIdRouteDeps {
  readonly callerIds: CallerIdStore;
  readonly publicUrl: string;
}

export function outgoingCallerIdRoutes(routes: RouteTable, deps: CallerIdRouteDeps): void {
  const base = `${API_ROOT}/Accounts/:accountSid/OutgoingCallerIds`;

  routes.resource(base, {
    GET: async (req, res) => {
      const q = Params.query(req);
      const items = await deps.callerIds.list({
        accountSid: accountOf(res).sid,
        phoneNumber: q.get('PhoneNumber'),
        friendlyName: q.get('FriendlyName'),
      });
      const format = formatOf(res);
      send(
        res,
        format,
        'OutgoingCallerIds',
        new Items(
          'OutgoingCallerId',
          items.map((c) => outgoingCallerIdDto(c, format)),
        ),
      );
    },
    POST: async (_req, res) => {
      const accountSid = accountOf(res).sid;
      const p = Params.body(res);
      const phoneNumber = p.get('PhoneNumber');
      if (!phoneNumber) throw new AppError('MissingParameter', 'PhoneNumber is required');
      addressParam('PhoneNumber', phoneNumber, [AddressKind.E164]);
      const at = new Date();
      const callerId: OutgoingCallerId = {
        sid: newSid(SidPrefix.PhoneNumber),
        accountSid,
        friendlyName: friendlyNameParam(p, 'FriendlyName') ?? formatNumber(phoneNumber),
        phoneNumber,
        dateCreated: at,
        dateUpdated: at,
      };
      if (!(await deps.callerIds.insert(callerId)))
        throw new AppError(
          'CallerIdExists',
          `${phoneNumber} is already an outgoing caller id of this account`,
        );
      res.setHeader(
        'Location',
        `${deps.publicUrl}${API_ROOT}/Accounts/${accountSid}/OutgoingCallerIds/${callerId.sid}`,
      );
      send(res, formatOf(res), 'OutgoingCallerId', outgoingCallerIdDto(callerId, formatOf(res)), 201);
    },
  });

  const find = async (res: Response, sid: string) => {
    const c = await deps.callerIds.get(accountOf(res).sid, sid);
    if (!c) throw new AppError('NotFound', `OutgoingCallerId ${sid} not found`);
    return c;
  };

  const update = async (req: Request, res: Response) => {
    const sid = req.params.callerIdSid as string;
    const current = await find(res, sid);
    const friendlyName = friendlyNameParam(Params.body(res), 'FriendlyName');
    const updated =
      friendlyName === undefined
        ? current
        : await deps.callerIds.rename(current.accountSid, sid, friendlyName);
    if (!updated) throw new AppError('NotFound', `OutgoingCallerId ${sid} not found`);
    send(res, formatOf(res), 'OutgoingCallerId', outgoingCallerIdDto(updated, formatOf(res)));
  };

  routes.resource(`${base}/:callerIdSid`, {
    GET: async (req, res) => {
      const c = await find(res, req.params.callerIdSid as string);
      send(res, formatOf(res), 'OutgoingCallerId', outgoingCallerIdDto(c, formatOf(res)));
    },
    POST: update,
    PUT: update,
    DELETE: async (req, res) => {
      const sid = req.params.callerIdSid as string;
      if (!(await deps.callerIds.delete(accountOf(res).sid, sid)))
        throw new AppError('NotFound', `OutgoingCallerId ${sid} not found`);
      res.status(204).end();
    },
  });

  routes.describe(base, CALLER_IDS_SPEC);
  routes.describe(`${base}/:callerIdSid`, CALLER_ID_SPEC);
}

const CALLER_IDS_SPEC: RouteSpec = {
  tag: 'OutgoingCallerIds',
  GET: {
    summary: 'List outgoing caller ids',
    params: [{ name: 'PhoneNumber' }, { name: 'FriendlyName' }],
    response: list('OutgoingCallerId'),
  },
  POST: {
    summary: 'Add an outgoing caller id',
    params: [
      { name: 'PhoneNumber', required: 'handler', description: 'E.164 number' },
      { name: 'FriendlyName', description: 'Up to 64 characters; defaults to the formatted number' },
    ],
    response: one('OutgoingCallerId', 201),
  },
};

const CALLER_ID_SPEC: RouteSpec = {
  tag: 'OutgoingCallerIds',
  GET: { summary: 'Get an outgoing caller id', response: one('OutgoingCallerId') },
  POST: {
    summary: 'Rename an outgoing caller id',
    params: [{ name: 'FriendlyName' }],
    response: one('OutgoingCallerId'),
  },
  PUT: {
    summary: 'Rename an outgoing caller id',
    params: [{ name: 'FriendlyName' }],
    response: one('OutgoingCallerId'),
  },
  DELETE: { summary: 'Remove an outgoing caller id', response: empty },
};
