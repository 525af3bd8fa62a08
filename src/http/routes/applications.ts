/**
 * Applications (spec §Endpoints › Applications). Only the owning account may create, read, update or
 * delete its applications (§Authentication 6): for any other account — a parent administrator
 * included — the path answers 404.
 */
import type { Request, Response } from 'express';
import { AppError } from '../../errors.js';
import { newSid, SidPrefix } from '../../ids.js';
import { APPLICATION_KINDS, type Application, type ApplicationStore } from '../../store/application-store.js';
import { accountOf, callerOf, formatOf } from '../context.js';
import { empty, list, one, type RouteSpec } from '../openapi/spec.js';
import { Params } from '../params.js';
import { Items, send } from '../render.js';
import type { RouteTable } from '../router.js';
import { applicationDto } from '../serializers/application.js';
import { API_ROOT } from '../uris.js';
import { apiVersionParam, friendlyNameParam, urlParam } from '../validate.js';

export interface ApplicationRouteDeps {
  readonly applications: ApplicationStore;
  readonly publicUrl: string;
}

/** The path's account, only when it is the caller itself. */
function ownAccountSid(res: Response): string {
  const account = accountOf(res);
  if (account.sid !== callerOf(res).sid) throw new AppError('NotFound', 'Application not found');
  return account.sid;
}

/** Twilio's members for what is RcmlUrl + Kind here, and the Kind each one means. */
const TWILIO_URL_NAMES = [
  ['VoiceUrl', 'voice'],
  ['SmsUrl', 'sms'],
] as const;

/**
 * Refuses Twilio's VoiceUrl/SmsUrl rather than ignoring them: an application created with them
 * would have no markup URL and fail every call. The Twilio surface (/2010-04-01) translates them
 * before they reach these routes, so only a native request gets here with them.
 */
function refuseTwilioUrlNames(p: Params): void {
  for (const [name, kind] of TWILIO_URL_NAMES) {
    if (p.has(name)) {
      throw new AppError(
        'InvalidParameter',
        `${name} is not an Applications parameter on ${API_ROOT}: send RcmlUrl with Kind=${kind} (${name} is accepted on /2010-04-01)`,
      );
    }
  }
}

export function applicationRoutes(routes: RouteTable, deps: ApplicationRouteDeps): void {
  const base = `${API_ROOT}/Accounts/:accountSid/Applications`;

  routes.resource(base, {
    GET: async (_req, res) => {
      const list = await deps.applications.list(ownAccountSid(res));
      const format = formatOf(res);
      send(
        res,
        format,
        'Applications',
        new Items(
          'Application',
          list.map((a) => applicationDto(a, format)),
        ),
      );
    },
    POST: async (_req, res) => {
      const accountSid = ownAccountSid(res);
      const p = Params.body(res);
      refuseTwilioUrlNames(p);
      const friendlyName = friendlyNameParam(p, 'FriendlyName');
      if (friendlyName === undefined) throw new AppError('MissingParameter', 'FriendlyName is required');
      const at = new Date();
      const app: Application = {
        sid: newSid(SidPrefix.Application),
        accountSid,
        friendlyName,
        apiVersion: apiVersionParam(p) ?? '2012-04-24',
        voiceCallerIdLookup: p.bool('HasVoiceCallerIdLookup') ?? false,
        rcmlUrl: urlParam(p, 'RcmlUrl') ?? null,
        kind: p.oneOf('Kind', APPLICATION_KINDS) ?? 'voice',
        dateCreated: at,
        dateUpdated: at,
      };
      await deps.applications.insert(app);
      res.setHeader(
        'Location',
        `${deps.publicUrl}${API_ROOT}/Accounts/${accountSid}/Applications/${app.sid}`,
      );
      send(res, formatOf(res), 'Application', applicationDto(app, formatOf(res)), 201);
    },
  });

  const find = async (res: Response, sid: string) => {
    const app = await deps.applications.get(ownAccountSid(res), sid);
    if (!app) throw new AppError('NotFound', `Application ${sid} not found`);
    return app;
  };

  const update = async (req: Request, res: Response) => {
    const sid = req.params.applicationSid as string;
    await find(res, sid);
    const p = Params.body(res);
    refuseTwilioUrlNames(p);
    const updated = await deps.applications.update(accountOf(res).sid, sid, {
      friendlyName: friendlyNameParam(p, 'FriendlyName'),
      apiVersion: apiVersionParam(p),
      voiceCallerIdLookup: p.bool('VoiceCallerIdLookup'),
      rcmlUrl: urlParam(p, 'RcmlUrl'),
      kind: p.oneOf('Kind', APPLICATION_KINDS),
    });
    if (!updated) throw new AppError('NotFound', `Application ${sid} not found`);
    send(res, formatOf(res), 'Application', applicationDto(updated, formatOf(res)));
  };

  routes.resource(`${base}/:applicationSid`, {
    GET: async (req, res) => {
      const app = await find(res, req.params.applicationSid as string);
      send(res, formatOf(res), 'Application', applicationDto(app, formatOf(res)));
    },
    POST: update,
    PUT: update,
    DELETE: async (req, res) => {
      const sid = req.params.applicationSid as string;
      if (!(await deps.applications.delete(ownAccountSid(res), sid))) {
        throw new AppError('NotFound', `Application ${sid} not found`);
      }
      res.status(204).end();
    },
  });

  routes.describe(base, APPLICATIONS_SPEC);
  routes.describe(`${base}/:applicationSid`, APPLICATION_SPEC);
}

const APPLICATION_PARAMS = [
  { name: 'ApiVersion' },
  { name: 'RcmlUrl', type: 'url', description: 'Markup URL of the application' },
  { name: 'Kind', enum: APPLICATION_KINDS },
] as const;

const APPLICATIONS_SPEC: RouteSpec = {
  tag: 'Applications',
  GET: { summary: 'List applications', response: list('Application') },
  POST: {
    summary: 'Create an application',
    params: [
      { name: 'FriendlyName', required: 'handler' },
      { name: 'HasVoiceCallerIdLookup', type: 'boolean' },
      ...APPLICATION_PARAMS,
    ],
    response: one('Application', 201),
  },
};

const APPLICATION_UPDATE: RouteSpec['POST'] = {
  summary: 'Update an application',
  params: [{ name: 'FriendlyName' }, { name: 'VoiceCallerIdLookup', type: 'boolean' }, ...APPLICATION_PARAMS],
  response: one('Application'),
};

const APPLICATION_SPEC: RouteSpec = {
  tag: 'Applications',
  GET: { summary: 'Get an application', response: one('Application') },
  POST: APPLICATION_UPDATE,
  PUT: { ...APPLICATION_UPDATE, summary: 'Update an application (PUT)' },
  DELETE: { summary: 'Delete an application', response: empty },
};
