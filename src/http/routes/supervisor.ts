/**
 * The Supervisor API (spec §Supervisor, §Supervisor metrics; Restcomm's Supervisor endpoint fills in
 * what the spec leaves open): `GET /Accounts/{sid}/Supervisor.json` (TotalCalls),
 * `/Supervisor.json/metrics[?LiveCallDetails=true]` and `/Supervisor.json/livecalls`. JSON only,
 * with Restcomm's member names as they are (PascalCase, `Initial Invite`), so they bypass the
 * snake_case renderer.
 *
 * Only the Super Admin sees the node (and, with `?Scope=cluster`, every node sharing the Redis:
 * summed and per-node figures, cluster-figures.ts); `?Scope=account` shows an account Administrator
 * (or the Super Admin) the calls of the path's account and its sub-accounts. Figures come from the
 * SupervisorView (call events), the registrar's binding count and the SMS service's counters.
 */
import type { Request, Response } from 'express';
import type { AccountService } from '../../actors/account/account-service.js';
import type { SmsMetrics } from '../../actors/sms/sms-service.js';
import { type ClusterFigures, metricsOf, sumFigures } from '../../actors/supervision/cluster-figures.js';
import type { LiveCall, SupervisorView } from '../../actors/supervision/supervisor-view.js';
import { rfc2822 } from '../../dates.js';
import { AppError } from '../../errors.js';
import { type Account, Role } from '../../store/account-store.js';
import { accountOf, callerOf, state } from '../context.js';
import { jsonDocument, type RouteSpec } from '../openapi/spec.js';
import { Params } from '../params.js';
import { writeJson } from '../render.js';
import type { RouteTable } from '../router.js';
import { API_ROOT } from '../uris.js';

/** Where the supervisor's figures come from. */
export interface SupervisorSources {
  readonly view: SupervisorView;
  readonly instanceId: string;
  readonly version: string;
  readonly revision: string;
  /** Registered SIP contacts (null without SIP). */
  registeredUsers(): Promise<number | null>;
  /** The TextMessage* counters (null without messaging). */
  smsMetrics(): Readonly<SmsMetrics> | null;
  /** Every node's figures (`Scope=cluster`); null when this node does not share them. */
  readonly cluster: ClusterFigures | null;
}

export interface SupervisorRouteDeps {
  readonly supervisor: SupervisorSources;
  readonly accounts: AccountService;
}

export const SupervisorScope = { Node: 'node', Account: 'account', Cluster: 'cluster' } as const;
export type SupervisorScope = (typeof SupervisorScope)[keyof typeof SupervisorScope];
export const SCOPES = Object.values(SupervisorScope);

const SMS_ZERO: SmsMetrics = {
  TextMessageInboundToApp: 0,
  TextMessageInboundToClient: 0,
  TextMessageInboundToProxyOut: 0,
  TextMessageNotFound: 0,
  TextMessageOutbound: 0,
};

/**
 * One live call as Restcomm's LiveCallDetails item (its member names, spaces included), plus
 * `AccountSid` (ours: the owner, so a cluster or account-tree view needs no lookup).
 */
export function liveCallJson(c: LiveCall): Record<string, string | number | null> {
  return {
    sid: c.sid,
    State: c.state,
    type: c.type,
    direction: c.direction,
    date_created: rfc2822(new Date(c.dateCreated)),
    ForwardedFrom: c.forwardedFrom,
    CallerName: c.callerName,
    from: c.from,
    to: c.to,
    'Initial Invite': c.initialInvite,
    'Last Response': c.lastResponse,
    AccountSid: c.accountSid,
  };
}

export function supervisorRoutes(routes: RouteTable, deps: SupervisorRouteDeps): void {
  const { supervisor } = deps;
  const base = `${API_ROOT}/Accounts/:accountSid/Supervisor`;

  /**
   * The requested scope once the caller may see it, with the accounts whose calls it covers
   * (undefined: the whole node or cluster).
   */
  const scopeOf = async (
    req: Request,
    res: Response,
  ): Promise<{ scope: SupervisorScope; accounts?: ReadonlySet<string> }> => {
    // JSON only (spec §Supervisor): errors too, whatever the suffix.
    state(res).format = 'json';
    const scope = Params.query(req).oneOf('Scope', SCOPES) ?? SupervisorScope.Node;
    return {
      scope,
      accounts: await authorizeSupervision(deps.accounts, callerOf(res), accountOf(res), scope),
    };
  };

  const envelope = () => ({
    DateTime: rfc2822(new Date()),
    InstanceId: supervisor.instanceId,
    Version: supervisor.version,
    Revision: supervisor.revision,
  });

  /** Every node's figures, or 400 when this node does not share them. */
  const clusterNodes = async () => {
    if (!supervisor.cluster)
      throw new AppError('InvalidParameter', 'Scope=cluster: figures are not shared here');
    return supervisor.cluster.nodes();
  };

  routes.resource(base, {
    GET: async (req, res) => {
      const { scope, accounts } = await scopeOf(req, res);
      const total =
        scope === SupervisorScope.Cluster
          ? (sumFigures(await clusterNodes()).TotalCallsSinceUptime ?? 0)
          : supervisor.view.figures(accounts).TotalCallsSinceUptime;
      writeJson(res, { ...envelope(), TotalCalls: total });
    },
  });

  routes.resource(`${base}/metrics`, {
    GET: async (req, res) => {
      const { scope, accounts } = await scopeOf(req, res);
      if (scope === SupervisorScope.Cluster) {
        // Live call details stay on their node: the cluster answer is figures, summed and per node.
        const nodes = await clusterNodes();
        const registered = (await supervisor.registeredUsers()) ?? 0;
        writeJson(res, {
          ...envelope(),
          Scope: SupervisorScope.Cluster,
          Metrics: { ...metricsOf(sumFigures(nodes)), RegisteredUsers: registered },
          Nodes: nodes.map((n) => ({
            InstanceId: n.instanceId,
            DateTime: rfc2822(new Date(n.at)),
            Metrics: metricsOf(n.figures),
          })),
        });
        return;
      }
      const details = Params.query(req).bool('LiveCallDetails') ?? false;
      // Registrations and messages are counted per node, not per account: no figure beats a wrong one.
      const perNode = accounts === undefined;
      const registered = perNode ? await supervisor.registeredUsers() : null;
      const sms = perNode ? (supervisor.smsMetrics() ?? SMS_ZERO) : nullSms();
      const calls = supervisor.view.figures(accounts);
      const query = accounts ? '?Scope=account' : '';
      writeJson(res, {
        ...envelope(),
        Metrics: { ...calls, RegisteredUsers: perNode ? (registered ?? 0) : null, ...sms },
        LiveCallDetails: details
          ? supervisor.view.liveCalls(accounts).map(liveCallJson)
          : `${API_ROOT}/Accounts/${accountOf(res).sid}/Supervisor.json/livecalls${query}`,
      });
    },
  });

  routes.resource(`${base}/livecalls`, {
    GET: async (req, res) => {
      const { scope, accounts } = await scopeOf(req, res);
      if (scope === SupervisorScope.Cluster)
        throw new AppError(
          'InvalidParameter',
          'Scope=cluster is served by /Supervisor.json/metrics (figures only)',
        );
      writeJson(res, supervisor.view.liveCalls(accounts).map(liveCallJson));
    },
  });

  routes.describe(base, spec('Supervisor summary: TotalCalls since the node started'));
  routes.describe(`${base}/metrics`, {
    ...spec('Supervisor metrics'),
    GET: {
      ...SCOPED_GET,
      summary: 'Supervisor metrics',
      params: [
        ...(SCOPED_GET.params ?? []),
        {
          name: 'LiveCallDetails',
          type: 'boolean',
          description: 'true: the live calls in LiveCallDetails; else its URL',
        },
      ],
    },
  });
  routes.describe(`${base}/livecalls`, spec('Live calls'));
}

const SCOPED_GET = {
  summary: '',
  description:
    'Served at `/Supervisor.json…` (JSON only). Super Admin only, unless Scope=account: the calls of the ' +
    "path's account tree, for an Administrator of it.",
  params: [
    {
      name: 'Scope',
      enum: SCOPES,
      description:
        'node (default, Super Admin), cluster (every node sharing the Redis, Super Admin; figures only) ' +
        'or account (the account and its sub-accounts)',
    },
  ],
  response: jsonDocument(),
} as const;

function spec(summary: string): RouteSpec {
  return { tag: 'Supervisor', jsonOnly: true, GET: { ...SCOPED_GET, summary } };
}

function nullSms(): Record<keyof SmsMetrics, null> {
  return {
    TextMessageInboundToApp: null,
    TextMessageInboundToClient: null,
    TextMessageInboundToProxyOut: null,
    TextMessageNotFound: null,
    TextMessageOutbound: null,
  };
}

/**
 * The accounts whose calls the caller may supervise in `scope` (undefined: the whole node or
 * cluster), or 403. `account` is the path's account, already limited to the caller's tree.
 */
export async function authorizeSupervision(
  accounts: AccountService,
  caller: Account,
  account: Account,
  scope: SupervisorScope,
): Promise<ReadonlySet<string> | undefined> {
  if (scope !== SupervisorScope.Account) {
    if (!caller.isSuperAdmin) throw new AppError('Forbidden', `Only the Super Admin supervises the ${scope}`);
    return undefined;
  }
  if (!caller.isSuperAdmin && caller.role !== Role.Administrator)
    throw new AppError('Forbidden', 'Only an Administrator supervises its accounts');
  return treeOf(accounts, account);
}

async function treeOf(accounts: AccountService, account: Account): Promise<ReadonlySet<string>> {
  const descendants = await accounts.listSubAccounts(account);
  return new Set([account.sid, ...descendants.map((a) => a.sid)]);
}
