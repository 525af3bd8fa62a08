/**
 * Clients (spec §Endpoints › Clients). A Login is unique within the account's organization and must
 * be an RFC 2396 userinfo; the password is kept only as the SIP digest HA1 for the organization's
 * domain (the realm).
 */
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import type { AccountService } from '../../actors/account/account-service.js';
import { AppError } from '../../errors.js';
import { newSid, SidPrefix } from '../../ids.js';
import type { Account } from '../../store/account-store.js';
import type { ApplicationStore } from '../../store/application-store.js';
import type { Client, ClientStore } from '../../store/client-store.js';
import { accountOf, formatOf } from '../context.js';
import { empty, list, one, type RouteSpec, voiceTarget } from '../openapi/spec.js';
import { Params } from '../params.js';
import { Items, send } from '../render.js';
import type { RouteTable } from '../router.js';
import { clientDto } from '../serializers/client.js';
import { API_ROOT } from '../uris.js';
import { apiVersionParam, friendlyNameParam, methodParam, urlParam } from '../validate.js';

export interface ClientRouteDeps {
  readonly clients: ClientStore;
  readonly applications: ApplicationStore;
  readonly accounts: AccountService;
  readonly publicUrl: string;
}

/** RFC 2396 §3.2.2 userinfo: unreserved | escaped | ";" | ":" | "&" | "=" | "+" | "$" | "," */
const USERINFO = /^(?:[A-Za-z0-9\-_.!~*'();:&=+$,]|%[0-9A-Fa-f]{2})+$/;
export const CLIENT_PASSWORD_MIN = 8;

/** SIP digest HA1 (RFC 2617 §3.2.2.2): MD5(username ":" realm ":" password). */
export function digestHa1(login: string, realm: string, password: string): string {
  return createHash('md5').update(`${login}:${realm}:${password}`).digest('hex');
}

function passwordParam(p: Params): string | undefined {
  const v = p.get('Password');
  if (v === undefined) return undefined;
  if (v.length < CLIENT_PASSWORD_MIN || v.length > 128) {
    throw new AppError('InvalidParameter', `Password must be ${CLIENT_PASSWORD_MIN} to 128 characters`);
  }
  return v;
}

function statusParam(p: Params): 0 | 1 | undefined {
  const v = p.get('Status');
  if (v === undefined) return undefined;
  if (v !== '0' && v !== '1')
    throw new AppError('InvalidParameter', 'Status must be 0 (disabled) or 1 (enabled)');
  return v === '1' ? 1 : 0;
}

export function clientRoutes(routes: RouteTable, deps: ClientRouteDeps): void {
  const base = `${API_ROOT}/Accounts/:accountSid/Clients`;

  const realmOf = async (account: Account) => {
    const org = await deps.accounts.getOrganization(account.organizationSid);
    if (!org) throw new AppError('Internal', `Organization ${account.organizationSid} missing`);
    return org;
  };

  const applicationParam = async (p: Params, accountSid: string) => {
    const v = p.get('VoiceApplicationSid');
    if (v === undefined) return undefined;
    if (v === '') return null;
    if (!(await deps.applications.get(accountSid, v))) {
      throw new AppError(
        'InvalidParameter',
        `VoiceApplicationSid ${v} is not an application of this account`,
      );
    }
    return v;
  };

  routes.resource(base, {
    GET: async (_req, res) => {
      const list = await deps.clients.list(accountOf(res).sid);
      const format = formatOf(res);
      send(
        res,
        format,
        'Clients',
        new Items(
          'Client',
          list.map((c) => clientDto(c, format)),
        ),
      );
    },
    POST: async (_req, res) => {
      const account = accountOf(res);
      const p = Params.body(res);
      const login = p.get('Login');
      if (!login) throw new AppError('MissingParameter', 'Login is required');
      if (!USERINFO.test(login) || login.length > 128) {
        throw new AppError(
          'InvalidParameter',
          "Login must be a valid RFC 2396 userinfo (letters, digits, -_.!~*'();:&=+$, or %HH)",
        );
      }
      const password = passwordParam(p);
      if (password === undefined) throw new AppError('MissingParameter', 'Password is required');
      const org = await realmOf(account);
      const at = new Date();
      const client: Client = {
        sid: newSid(SidPrefix.Client),
        accountSid: account.sid,
        organizationSid: org.sid,
        login,
        friendlyName: friendlyNameParam(p, 'FriendlyName') ?? login.slice(0, 64),
        apiVersion: apiVersionParam(p) ?? '2012-04-24',
        status: statusParam(p) ?? 1,
        ha1: digestHa1(login, org.domainName, password),
        realm: org.domainName,
        voiceUrl: urlParam(p, 'VoiceUrl') ?? null,
        voiceMethod: methodParam(p, 'VoiceMethod') ?? 'POST',
        voiceFallbackUrl: urlParam(p, 'VoiceFallbackUrl') ?? null,
        voiceFallbackMethod: methodParam(p, 'VoiceFallbackMethod') ?? 'POST',
        voiceApplicationSid: (await applicationParam(p, account.sid)) ?? null,
        dateCreated: at,
        dateUpdated: at,
      };
      await deps.clients.insert(client);
      res.setHeader('Location', `${deps.publicUrl}${API_ROOT}/Accounts/${account.sid}/Clients/${client.sid}`);
      send(res, formatOf(res), 'Client', clientDto(client, formatOf(res)), 201);
    },
  });

  const find = async (res: Response, sid: string) => {
    const client = await deps.clients.get(accountOf(res).sid, sid);
    if (!client) throw new AppError('NotFound', `Client ${sid} not found`);
    return client;
  };

  const update = async (req: Request, res: Response) => {
    const account = accountOf(res);
    const current = await find(res, req.params.clientSid as string);
    const p = Params.body(res);
    const password = passwordParam(p);
    let ha1: string | undefined;
    let realm: string | undefined;
    if (password !== undefined) {
      realm = (await realmOf(account)).domainName;
      ha1 = digestHa1(current.login, realm, password);
    }
    const updated = await deps.clients.update(account.sid, current.sid, {
      friendlyName: friendlyNameParam(p, 'FriendlyName'),
      status: statusParam(p),
      ha1,
      realm,
      voiceUrl: urlParam(p, 'VoiceUrl'),
      voiceMethod: methodParam(p, 'VoiceMethod'),
      voiceFallbackUrl: urlParam(p, 'VoiceFallbackUrl'),
      voiceFallbackMethod: methodParam(p, 'VoiceFallbackMethod'),
      voiceApplicationSid: await applicationParam(p, account.sid),
    });
    if (!updated) throw new AppError('NotFound', `Client ${current.sid} not found`);
    send(res, formatOf(res), 'Client', clientDto(updated, formatOf(res)));
  };

  routes.resource(`${base}/:clientSid`, {
    GET: async (req, res) => {
      send(
        res,
        formatOf(res),
        'Client',
        clientDto(await find(res, req.params.clientSid as string), formatOf(res)),
      );
    },
    POST: update,
    PUT: update,
    DELETE: async (req, res) => {
      if (!(await deps.clients.delete(accountOf(res).sid, req.params.clientSid as string))) {
        throw new AppError('NotFound', `Client ${req.params.clientSid} not found`);
      }
      res.status(204).end();
    },
  });

  routes.describe(base, CLIENTS_SPEC);
  routes.describe(`${base}/:clientSid`, CLIENT_SPEC);
}

const CLIENT_SETTINGS = [
  { name: 'FriendlyName' },
  { name: 'Status', enum: ['0', '1'], description: '1 enabled, 0 disabled' },
  ...voiceTarget('Voice'),
  { name: 'VoiceApplicationSid', type: 'sid' },
] as const;

const CLIENTS_SPEC: RouteSpec = {
  tag: 'Clients',
  GET: { summary: 'List clients', response: list('Client') },
  POST: {
    summary: 'Create a client',
    params: [
      { name: 'Login', required: true, description: 'RFC 2396 userinfo, unique in the organization' },
      { name: 'Password', required: true, description: `${CLIENT_PASSWORD_MIN} to 128 characters` },
      { name: 'ApiVersion' },
      ...CLIENT_SETTINGS,
    ],
    response: one('Client', 201),
  },
};

const CLIENT_UPDATE: RouteSpec['POST'] = {
  summary: 'Update a client',
  params: [{ name: 'Password', description: `${CLIENT_PASSWORD_MIN} to 128 characters` }, ...CLIENT_SETTINGS],
  response: one('Client'),
};

const CLIENT_SPEC: RouteSpec = {
  tag: 'Clients',
  GET: { summary: 'Get a client', response: one('Client') },
  POST: CLIENT_UPDATE,
  PUT: { ...CLIENT_UPDATE, summary: 'Update a client (PUT)' },
  DELETE: { summary: 'Delete a client', response: empty },
};
