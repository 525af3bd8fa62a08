/**
 * Accounts endpoints (spec §Endpoints › Accounts, §Account Status) and the minimal Organizations
 * resource (sid + domain name) that account creation, migration and profile linking need.
 */
import type { Request, Response } from 'express';
import type { AccountService } from '../../actors/account/account-service.js';
import { AppError } from '../../errors.js';
import type { Account } from '../../store/account-store.js';
import { ACCOUNT_STATUSES, ROLES } from '../../store/account-store.js';
import { accountOf, callerOf, formatOf } from '../context.js';
import { list, one, type RouteSpec } from '../openapi/spec.js';
import { Params } from '../params.js';
import { Items, send, sendRecord } from '../render.js';
import type { RouteTable } from '../router.js';
import { accountDto, organizationDto } from '../serializers/account.js';
import { API_ROOT } from '../uris.js';

export interface AccountRouteDeps {
  readonly accounts: AccountService;
  readonly publicUrl: string;
  /** Sid of the profile in effect for the account (spec §Profile resolution). */
  readonly effectiveProfileSid: (account: Account) => Promise<string>;
}

export function accountRoutes(routes: RouteTable, deps: AccountRouteDeps): void {
  const { accounts } = deps;

  const sendAccount = async (res: Response, account: Account, status = 200) => {
    const profileSid = await deps.effectiveProfileSid(account);
    const link = `<${deps.publicUrl}${API_ROOT}/Profiles/${profileSid}>; rel="related"`;
    const format = formatOf(res);
    sendRecord(res, format, 'Account', account, () => accountDto(account, format), status, ['Link', link]);
  };

  // Registered before /Accounts/:accountSid so "migrate" is never taken for an account.
  routes.resource(`${API_ROOT}/Accounts/migrate/:targetSid`, {
    POST: async (req, res) => {
      const p = Params.body(res);
      // Path parameters arrive decoded by the router; decoding again would misread a literal '%'.
      const target = req.params.targetSid as string;
      const migrated = await accounts.migrate(callerOf(res), target, p.get('Organization'));
      await sendAccount(res, migrated);
    },
  });

  routes.resource(`${API_ROOT}/Accounts`, {
    GET: async (_req, res) => {
      const list = await accounts.listSubAccounts(callerOf(res));
      const format = formatOf(res);
      send(
        res,
        format,
        'Accounts',
        new Items(
          'Account',
          list.map((a) => accountDto(a, format)),
        ),
      );
    },
    POST: async (_req, res) => {
      const p = Params.body(res);
      const created = await accounts.create(callerOf(res), {
        emailAddress: p.get('EmailAddress'),
        password: p.get('Password'),
        role: p.get('Role'),
        friendlyName: p.get('FriendlyName'),
        status: p.get('Status'),
        organizationSid: p.get('OrganizationSid'),
      });
      res.setHeader('Location', `${deps.publicUrl}${API_ROOT}/Accounts/${created.sid}`);
      await sendAccount(res, created, 201);
    },
  });

  const update = async (_req: Request, res: Response) => {
    const p = Params.body(res);
    const caller = callerOf(res);
    const updated = await accounts.update(caller, accountOf(res), {
      friendlyName: p.get('FriendlyName'),
      status: p.get('Status'),
      password: p.get('Password'),
      role: p.get('Role'),
    });
    await sendAccount(res, updated);
  };

  routes.resource(
    `${API_ROOT}/Accounts/:accountSid`,
    {
      GET: async (_req, res) => sendAccount(res, accountOf(res)),
      POST: update,
      PUT: update,
    },
    {
      // Spec §Account Status: an uninitialized account may set its own Password, which activates it.
      allowInactive: (req, res, caller) => {
        const named = (req.params.accountSid as string).toLowerCase();
        const self = named === caller.sid.toLowerCase() || named === caller.emailAddress;
        const p = Params.body(res);
        const onlyPassword = p.has('Password') && !p.has('Status') && !p.has('Role');
        return caller.status === 'uninitialized' && self && req.method !== 'GET' && onlyPassword;
      },
    },
  );

  routes.resource(`${API_ROOT}/Organizations`, {
    GET: async (_req, res) => {
      const caller = callerOf(res);
      const all = await accounts.listOrganizations();
      const visible = caller.isSuperAdmin ? all : all.filter((o) => o.sid === caller.organizationSid);
      const format = formatOf(res);
      send(
        res,
        format,
        'Organizations',
        new Items(
          'Organization',
          visible.map((o) => organizationDto(o, format)),
        ),
      );
    },
    POST: async (_req, res) => {
      const org = await accounts.createOrganization(callerOf(res), Params.body(res).get('DomainName'));
      res.setHeader('Location', `${deps.publicUrl}${API_ROOT}/Organizations/${org.sid}`);
      send(res, formatOf(res), 'Organization', organizationDto(org, formatOf(res)), 201);
    },
  });

  routes.resource(`${API_ROOT}/Organizations/:organizationSid`, {
    GET: async (req, res) => {
      const caller = callerOf(res);
      const org = await accounts.getOrganization(req.params.organizationSid as string);
      if (!org || (!caller.isSuperAdmin && org.sid !== caller.organizationSid)) {
        throw new AppError('NotFound', `Organization ${req.params.organizationSid} not found`);
      }
      send(res, formatOf(res), 'Organization', organizationDto(org, formatOf(res)));
    },
  });

  routes.describe(`${API_ROOT}/Accounts/migrate/:targetSid`, MIGRATE_SPEC);
  routes.describe(`${API_ROOT}/Accounts`, ACCOUNTS_SPEC);
  routes.describe(`${API_ROOT}/Accounts/:accountSid`, ACCOUNT_SPEC);
  routes.describe(`${API_ROOT}/Organizations`, ORGANIZATIONS_SPEC);
  routes.describe(`${API_ROOT}/Organizations/:organizationSid`, ORGANIZATION_SPEC);
}

const MIGRATE_SPEC: RouteSpec = {
  tag: 'Accounts',
  POST: {
    summary: 'Migrate an account to another organization',
    params: [{ name: 'Organization', type: 'sid', required: 'handler' }],
    response: one('Account'),
  },
};

const ACCOUNT_UPDATE: RouteSpec['POST'] = {
  summary: 'Update an account',
  description: 'An uninitialized account may set its own Password, which activates it.',
  params: [
    { name: 'FriendlyName' },
    { name: 'Status', enum: ACCOUNT_STATUSES },
    { name: 'Password' },
    { name: 'Role', enum: ROLES },
  ],
  response: one('Account'),
};

const ACCOUNTS_SPEC: RouteSpec = {
  tag: 'Accounts',
  GET: { summary: 'List sub-accounts', response: list('Account') },
  POST: {
    summary: 'Create a sub-account',
    params: [
      { name: 'EmailAddress', required: 'handler' },
      { name: 'Password', required: 'handler' },
      { name: 'Role', enum: ROLES },
      { name: 'FriendlyName' },
      { name: 'Status', enum: ACCOUNT_STATUSES },
      { name: 'OrganizationSid', type: 'sid' },
    ],
    response: one('Account', 201),
  },
};

const ACCOUNT_SPEC: RouteSpec = {
  tag: 'Accounts',
  GET: { summary: 'Get an account', response: one('Account') },
  POST: ACCOUNT_UPDATE,
  PUT: { ...ACCOUNT_UPDATE, summary: 'Update an account (PUT)' },
};

const ORGANIZATIONS_SPEC: RouteSpec = {
  tag: 'Organizations',
  GET: { summary: 'List organizations', response: list('Organization') },
  POST: {
    summary: 'Create an organization',
    params: [{ name: 'DomainName', required: 'handler' }],
    response: one('Organization', 201),
  },
};

const ORGANIZATION_SPEC: RouteSpec = {
  tag: 'Organizations',
  GET: { summary: 'Get an organization', response: one('Organization') },
};
