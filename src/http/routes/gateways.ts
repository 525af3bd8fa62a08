/**
 * Gateways (spec §Gateways) under `/Accounts/{AccountSid}/Management/Gateways`, reachable with both
 * the 2012-04-24 and the 2010-04-01 version segments. Gateways register the whole service with a
 * carrier, so only the Super Admin manages them (see docs/decisions.md).
 */
import type { Request, Response } from 'express';
import { AppError } from '../../errors.js';
import { newSid, SidPrefix } from '../../ids.js';
import { parseHostOrSipUri, SipUriError } from '../../sip/sip-uri.js';
import type { Gateway, GatewayRegistrationStatus, GatewayStore } from '../../store/gateway-store.js';
import type { SnapshotStore } from '../../store/snapshot-store.js';
import { accountOf, callerOf, formatOf } from '../context.js';
import { empty, list, one, type ParamSpec, type RouteSpec } from '../openapi/spec.js';
import { Params } from '../params.js';
import { type Format, Items, send } from '../render.js';
import type { RouteTable } from '../router.js';
import { gatewayDto } from '../serializers/records.js';
import { friendlyNameParam } from '../validate.js';

export interface GatewayRouteDeps {
  readonly gateways: GatewayStore;
  readonly snapshots: SnapshotStore;
  readonly publicUrl: string;
  /**
   * Why the SIP target policy refuses a `Proxy` (after DNS resolution), or null. Absent with
   * SIP_ENABLED=false: nothing is ever sent to a gateway then.
   */
  readonly checkGatewayProxy?: ((proxy: string) => Promise<string | null>) | undefined;
}

export const TTL_MIN = 30;
export const TTL_MAX = 86_400;

function superAdminOnly(res: Response): string {
  if (!callerOf(res).isSuperAdmin) throw new AppError('Forbidden', 'Only the Super Admin manages gateways');
  return accountOf(res).sid;
}

async function proxyParam(p: Params, deps: GatewayRouteDeps): Promise<string | undefined> {
  const v = p.get('Proxy');
  if (v === undefined) return undefined;
  // host, host:port, [v6]:port, or a sip:/sips: URI: the form the registrations read (src/sip/gateways.ts).
  try {
    parseHostOrSipUri(v);
  } catch (e) {
    if (!(e instanceof SipUriError)) throw e;
    throw new AppError('InvalidParameter', `Proxy must be host[:port] or a sip: URI (${e.reason})`);
  }
  // The same target policy as every other SIP destination a tenant names (docs/sip.md).
  const refused = await deps.checkGatewayProxy?.(v);
  if (refused) throw new AppError('InvalidParameter', `Proxy is not an allowed SIP destination: ${refused}`);
  return v;
}

export function gatewayRoutes(routes: RouteTable, deps: GatewayRouteDeps): void {
  const withRegistration = async (g: Gateway, format: Format) =>
    gatewayDto(g, format, await deps.snapshots.load<GatewayRegistrationStatus>('gateway', g.sid));

  for (const version of ['2012-04-24', '2010-04-01']) {
    const base = `/${version}/Accounts/:accountSid/Management/Gateways`;
    routes.resource(base, {
      GET: async (_req, res) => {
        const list = await deps.gateways.list(superAdminOnly(res));
        const format = formatOf(res);
        send(
          res,
          format,
          'Gateways',
          new Items('Gateway', await Promise.all(list.map((g) => withRegistration(g, format)))),
        );
      },
      POST: async (_req, res) => {
        const accountSid = superAdminOnly(res);
        const p = Params.body(res);
        const proxy = await proxyParam(p, deps);
        if (!proxy) throw new AppError('MissingParameter', 'Proxy is required');
        const at = new Date();
        const g: Gateway = {
          sid: newSid(SidPrefix.Gateway),
          accountSid,
          friendlyName: friendlyNameParam(p, 'FriendlyName') ?? proxy.slice(0, 64),
          userName: p.get('UserName') ?? null,
          password: p.get('Password') ?? null,
          proxy,
          register: p.bool('Register') ?? false,
          ttl: p.int('TTL', TTL_MIN, TTL_MAX) ?? 3600,
          dateCreated: at,
          dateUpdated: at,
        };
        await deps.gateways.insert(g);
        res.setHeader(
          'Location',
          `${deps.publicUrl}/${version}/Accounts/${accountSid}/Management/Gateways/${g.sid}`,
        );
        send(res, formatOf(res), 'Gateway', gatewayDto(g, formatOf(res)), 201);
      },
    });

    const update = async (req: Request, res: Response) => {
      const accountSid = superAdminOnly(res);
      const p = Params.body(res);
      const updated = await deps.gateways.update(accountSid, req.params.gatewaySid as string, {
        friendlyName: friendlyNameParam(p, 'FriendlyName'),
        userName: p.get('UserName'),
        password: p.get('Password'),
        proxy: await proxyParam(p, deps),
        register: p.bool('Register'),
        ttl: p.int('TTL', TTL_MIN, TTL_MAX),
      });
      if (!updated) throw new AppError('NotFound', `Gateway ${req.params.gatewaySid} not found`);
      send(res, formatOf(res), 'Gateway', await withRegistration(updated, formatOf(res)));
    };

    routes.resource(`${base}/:gatewaySid`, {
      GET: async (req, res) => {
        const g = await deps.gateways.get(superAdminOnly(res), req.params.gatewaySid as string);
        if (!g) throw new AppError('NotFound', `Gateway ${req.params.gatewaySid} not found`);
        send(res, formatOf(res), 'Gateway', await withRegistration(g, formatOf(res)));
      },
      POST: update,
      PUT: update,
      DELETE: async (req, res) => {
        if (!(await deps.gateways.delete(superAdminOnly(res), req.params.gatewaySid as string))) {
          throw new AppError('NotFound', `Gateway ${req.params.gatewaySid} not found`);
        }
        res.status(204).end();
      },
    });
  }

  for (const version of ['2012-04-24', '2010-04-01']) {
    const base = `/${version}/Accounts/:accountSid/Management/Gateways`;
    routes.describe(base, gatewaysSpec(version));
    routes.describe(`${base}/:gatewaySid`, gatewaySpec(version));
  }
}

const GATEWAY_PARAMS: ParamSpec[] = [
  { name: 'FriendlyName' },
  { name: 'UserName' },
  { name: 'Password' },
  { name: 'Register', type: 'boolean' },
  { name: 'TTL', type: 'integer', description: `Registration lifetime, ${TTL_MIN} to ${TTL_MAX} seconds` },
];

/** Both version segments serve gateways; the operations are told apart by it. */
const suffix = (version: string) => (version === '2012-04-24' ? '' : ` (${version} path)`);

function gatewaysSpec(version: string): RouteSpec {
  return {
    tag: 'Gateways',
    GET: { summary: `List gateways${suffix(version)}`, response: list('Gateway') },
    POST: {
      summary: `Create a gateway${suffix(version)}`,
      description: 'Super Admin only.',
      params: [
        { name: 'Proxy', required: 'handler', description: 'host[:port] or a sip: URI' },
        ...GATEWAY_PARAMS,
      ],
      response: one('Gateway', 201),
    },
  };
}

function gatewaySpec(version: string): RouteSpec {
  const update = {
    summary: `Update a gateway${suffix(version)}`,
    params: [{ name: 'Proxy' }, ...GATEWAY_PARAMS],
    response: one('Gateway'),
  };
  return {
    tag: 'Gateways',
    GET: { summary: `Get a gateway${suffix(version)}`, response: one('Gateway') },
    POST: update,
    PUT: { ...update, summary: `Update a gateway (PUT)${suffix(version)}` },
    DELETE: { summary: `Delete a gateway${suffix(version)}`, response: empty },
  };
}
