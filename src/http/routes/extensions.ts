/**
 * The multi-provider extension's configuration (spec §Endpoints › Multi-provider extension): one per
 * account, Super Admin only, its ConfigurationData checked as resolution will read it.
 */
import type { Response } from 'express';
import type { AccountService } from '../../actors/account/account-service.js';
import { AppError } from '../../errors.js';
import { newSid, SidPrefix } from '../../ids.js';
import { ConfigurationDataError, parseConfigurationData } from '../../profiles/multi-provider.js';
import { MULTI_PROVIDER } from '../../profiles/resolution.js';
import type { Extension, ProfileStore } from '../../store/profile-store.js';
import { callerOf } from '../context.js';
import { JSON_MAX_DEPTH, jsonDepth } from '../json-body.js';
import { jsonDocument, type ParamSpec, type RouteSpec } from '../openapi/spec.js';
import { Params } from '../params.js';
import { writeJson } from '../render.js';
import type { RouteTable } from '../router.js';
import { API_ROOT } from '../uris.js';

export interface ExtensionRouteDeps {
  readonly profiles: ProfileStore;
  readonly accounts: AccountService;
  readonly publicUrl: string;
}

export function extensionRoutes(routes: RouteTable, deps: ExtensionRouteDeps): void {
  const extensionJson = (e: Extension) => ({
    sid: e.sid,
    extension_name: e.extensionName,
    enabled: e.enabled,
    account_sid: e.accountSid,
    configuration_data: masked(e.configurationData),
    date_created: e.dateCreated.toISOString(),
    date_updated: e.dateUpdated.toISOString(),
    uri: `${API_ROOT}/ExtensionsConfiguration.json/${e.sid}`,
  });

  const superAdmin = (res: Response) => {
    if (!callerOf(res).isSuperAdmin)
      throw new AppError('Forbidden', 'Only the Super Admin manages extension configurations');
  };

  const readParams = async (res: Response, requireAll: boolean) => {
    const p = Params.body(res);
    const name = p.get('ExtensionName');
    if (name === undefined && requireAll) throw new AppError('MissingParameter', 'ExtensionName is required');
    if (name !== undefined && name !== MULTI_PROVIDER)
      throw new AppError('InvalidParameter', `ExtensionName must be ${MULTI_PROVIDER}`);
    const data = p.get('ConfigurationData');
    if (data === undefined && requireAll)
      throw new AppError('MissingParameter', 'ConfigurationData is required');
    let configurationData: Extension['configurationData'] | undefined;
    try {
      // Depth-capped before the parser sees it (NUL was refused with the form, see params.ts).
      if (data !== undefined && jsonDepth(data) > JSON_MAX_DEPTH)
        throw new AppError(
          'InvalidParameter',
          `ConfigurationData nests deeper than ${JSON_MAX_DEPTH} levels`,
        );
      configurationData = data === undefined ? undefined : parseConfigurationData(data);
    } catch (e) {
      if (e instanceof ConfigurationDataError) throw new AppError('InvalidParameter', e.message);
      throw e;
    }
    const accountParam = p.get('AccountSid');
    if (accountParam === undefined && requireAll)
      throw new AppError('MissingParameter', 'AccountSid is required');
    let accountSid: string | undefined;
    if (accountParam !== undefined) {
      const account = await deps.accounts.resolve(accountParam);
      if (!account) throw new AppError('NotFound', `Account ${accountParam} not found`);
      accountSid = account.sid;
    }
    return { enabled: p.bool('Enabled'), configurationData, accountSid };
  };

  routes.resource(`${API_ROOT}/ExtensionsConfiguration`, {
    POST: async (_req, res) => {
      superAdmin(res);
      const v = await readParams(res, true);
      const at = new Date();
      const e: Extension = {
        sid: newSid(SidPrefix.Extension),
        accountSid: v.accountSid as string,
        extensionName: MULTI_PROVIDER,
        enabled: v.enabled ?? true,
        configurationData: v.configurationData as Extension['configurationData'],
        dateCreated: at,
        dateUpdated: at,
      };
      if (!(await deps.profiles.insertExtension(e))) {
        throw new AppError(
          'AlreadyExists',
          `Account ${e.accountSid} already has a ${MULTI_PROVIDER} configuration; modify it`,
        );
      }
      res.setHeader('Location', `${deps.publicUrl}${API_ROOT}/ExtensionsConfiguration.json/${e.sid}`);
      writeJson(res, extensionJson(e), 201);
    },
  });
  routes.resource(`${API_ROOT}/ExtensionsConfiguration/:extensionSid`, {
    GET: async (req, res) => {
      superAdmin(res);
      const e = await deps.profiles.getExtension(req.params.extensionSid as string);
      if (!e) throw new AppError('NotFound', `Extension configuration ${req.params.extensionSid} not found`);
      writeJson(res, extensionJson(e));
    },
    POST: async (req, res) => {
      superAdmin(res);
      const v = await readParams(res, false);
      const e = await deps.profiles.updateExtension(req.params.extensionSid as string, v);
      if (!e) throw new AppError('NotFound', `Extension configuration ${req.params.extensionSid} not found`);
      writeJson(res, extensionJson(e));
    },
  });

  routes.describe(`${API_ROOT}/ExtensionsConfiguration`, EXTENSIONS_SPEC);
  routes.describe(`${API_ROOT}/ExtensionsConfiguration/:extensionSid`, EXTENSION_SPEC);
}

/** Proxy passwords are never echoed back. */
function masked(c: Extension['configurationData']): unknown {
  const voice = c['outbound-voice'];
  if (!voice) return c;
  return {
    ...c,
    'outbound-voice': voice.map((v) => ({
      ...v,
      proxy: v.proxy.map((p) => (p.password === undefined ? p : { ...p, password: '********' })),
    })),
  };
}

const EXTENSION_PARAMS: ParamSpec[] = [
  { name: 'ExtensionName', required: 'handler', enum: [MULTI_PROVIDER] },
  { name: 'ConfigurationData', required: 'handler', description: 'A JSON document' },
  { name: 'AccountSid', type: 'sid', required: 'handler' },
  { name: 'Enabled', type: 'boolean' },
];

const EXTENSIONS_SPEC: RouteSpec = {
  tag: 'Extensions',
  POST: {
    summary: 'Create an extension configuration',
    description: 'Super Admin only.',
    params: EXTENSION_PARAMS,
    response: jsonDocument(201),
  },
};

const EXTENSION_SPEC: RouteSpec = {
  tag: 'Extensions',
  GET: { summary: 'Get an extension configuration', response: jsonDocument() },
  POST: {
    summary: 'Update an extension configuration',
    params: EXTENSION_PARAMS.map((p) => ({ ...p, required: false })),
    response: jsonDocument(),
  },
};
