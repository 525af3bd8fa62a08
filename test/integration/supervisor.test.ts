/**
 * The Supervisor API against a real server and sipp: the metrics document has every member; only
 * the Super Admin sees the node (a sub-account Administrator gets 403, and its own tree with
 * Scope=account); a sipp call is one live call with its details while it lasts; a bridged `<Dial>`
 * is two (one incoming, one outgoing); none once they hang up. Two nodes on one Redis: either
 * answers `Scope=cluster` with the figures of both, summed and per node.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisKeys } from '../../src/store/redis/keys.js';
import { RedisSupervisorFigures } from '../../src/store/redis/supervisor-figures.js';
import { API, type Credentials, startTestServer, type TestServer } from '../support/server.js';
import { runSipp, startSipp } from '../support/sipp.js';
import { until, markup as xml } from '../support/until.js';
import { startWebhookServer, type WebhookServer } from '../support/webhook-server.js';

let ts: TestServer;
let hooks: WebhookServer;
let tenant: { sid: string; creds: Credentials };
let target: string;

const METRICS = [
  'LiveCalls',
  'LiveIncomingCalls',
  'LiveOutgoingCalls',
  'RegisteredUsers',
  'MaximumConcurrentCalls',
  'MaximumConcurrentIncomingCalls',
  'MaximumConcurrentOutgoingCalls',
  'TotalCallsSinceUptime',
  'IncomingCallsSinceUptime',
  'OutgoingCallsSinceUptime',
  'CompletedCalls',
  'NoAnswerCalls',
  'BusyCalls',
  'FailedCalls',
  'NotFoundCalls',
  'CanceledCalls',
  'TextMessageInboundToApp',
  'TextMessageInboundToClient',
  'TextMessageInboundToProxyOut',
  'TextMessageNotFound',
  'TextMessageOutbound',
  'AverageCallDurationInSecondsLast24Hours',
  'AverageCallDurationInSecondsLastHour',
];

const supervisor = (sid: string, rest = '') => `${API}/Accounts/${sid}/Supervisor.json${rest}`;
const metrics = async (query = '?LiveCallDetails=true') =>
  (await ts.request('GET', supervisor(ts.admin.sid, `/metrics${query}`), { auth: ts.admin })).json;

beforeAll(async () => {
  ts = await startTestServer({ label: 'supervisor' });
  hooks = await startWebhookServer();
  const r = await ts.request('POST', `${API}/Accounts.json`, {
    auth: ts.admin,
    form: { EmailAddress: 'tenant-admin@example.test', Password: 'password-123', Role: 'Administrator' },
  });
  tenant = { sid: r.json.sid, creds: { user: r.json.sid, secret: r.json.auth_token } };
  target = `127.0.0.1:${ts.server.sip!.stack.port}`;
});
afterAll(async () => {
  await hooks?.close();
  await ts?.dispose();
});

async function numberFor(path: string, number: string): Promise<string> {
  const r = await ts.request('POST', `${API}/Accounts/${tenant.sid}/IncomingPhoneNumbers.json`, {
    auth: tenant.creds,
    form: { PhoneNumber: number, VoiceUrl: `${hooks.origin}${path}` },
  });
  expect(r.status).toBe(201);
  return number;
}

describe('Supervisor API', () => {
  it('answers the metrics document with every member, and the live calls as a URL by default', async () => {
    const r = await ts.request('GET', supervisor(ts.admin.sid, '/metrics'), { auth: ts.admin });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/application\/json/);
    expect(Object.keys(r.json)).toEqual([
      'DateTime',
      'InstanceId',
      'Version',
      'Revision',
      'Metrics',
      'LiveCallDetails',
    ]);
    expect(r.json.InstanceId).toBe(ts.server.config.instanceId);
    // The checkout's revision (tests run from a git work tree).
    expect(r.json.Revision).toMatch(/^[0-9a-f]{12}$/);
    expect(Object.keys(r.json.Metrics).sort()).toEqual([...METRICS].sort());
    for (const m of METRICS) expect(r.json.Metrics[m], m).toEqual(expect.any(Number));
    expect(r.json.LiveCallDetails).toBe(`${API}/Accounts/${ts.admin.sid}/Supervisor.json/livecalls`);

    const live = await ts.request('GET', supervisor(ts.admin.sid, '/livecalls'), { auth: ts.admin });
    expect(live.status).toBe(200);
    expect(live.json).toEqual([]);
    const summary = await ts.request('GET', supervisor(ts.admin.sid), { auth: ts.admin });
    expect(summary.json.TotalCalls).toEqual(expect.any(Number));
  });

  it('refuses a sub-account Administrator the node (403, catalogue shape), shows it its own tree', async () => {
    for (const rest of ['', '/metrics', '/livecalls']) {
      const r = await ts.request('GET', supervisor(tenant.sid, rest), { auth: tenant.creds });
      expect(r.status, rest).toBe(403);
      expect(r.json).toMatchObject({
        code: 20403,
        status: 403,
        message: expect.any(String),
        more_info: expect.any(String),
      });
    }
    const own = await ts.request(
      'GET',
      supervisor(tenant.sid, '/metrics?Scope=account&LiveCallDetails=true'),
      {
        auth: tenant.creds,
      },
    );
    expect(own.status).toBe(200);
    expect(own.json.Metrics.LiveCalls).toBe(0);
    expect(own.json.Metrics.RegisteredUsers).toBeNull();
    expect(own.json.LiveCallDetails).toEqual([]);
    // Another account's supervision is outside the tenant's scope altogether.
    const foreign = await ts.request('GET', supervisor(ts.admin.sid, '/metrics?Scope=account'), {
      auth: tenant.creds,
    });
    expect(foreign.status).toBe(404);
    const bad = await ts.request('GET', supervisor(ts.admin.sid, '/metrics?Scope=galaxy'), {
      auth: ts.admin,
    });
    expect(bad.status).toBe(400);
  });

  it('shows a sipp call as one live call with its details while it lasts, none after', async () => {
    hooks.script('/pause', xml('<Pause length="4"/><Hangup/>'));
    const number = await numberFor('/pause', '+15550301001');
    const before = (await metrics('')).Metrics;
    const call = runSipp({ scenario: 'uac-call-expect-bye.xml', remote: target, service: number });
    const during = await until(
      metrics,
      (m) => m.Metrics.LiveCalls === 1 && m.LiveCallDetails[0]?.State === 'IN_PROGRESS',
    );
    expect(during.Metrics).toMatchObject({ LiveCalls: 1, LiveIncomingCalls: 1, LiveOutgoingCalls: 0 });
    const [live] = during.LiveCallDetails;
    expect(live).toMatchObject({
      sid: expect.stringMatching(/^CA/),
      State: 'IN_PROGRESS',
      type: 'PSTN',
      direction: 'inbound',
      date_created: expect.any(String),
      ForwardedFrom: null,
      to: number,
      'Initial Invite': expect.stringMatching(/^sip:\+?15550301001@/),
      'Last Response': 200,
      AccountSid: tenant.sid,
    });
    expect(Object.keys(live)).toEqual([
      'sid',
      'State',
      'type',
      'direction',
      'date_created',
      'ForwardedFrom',
      'CallerName',
      'from',
      'to',
      'Initial Invite',
      'Last Response',
      'AccountSid',
    ]);
    const listed = await ts.request('GET', supervisor(ts.admin.sid, '/livecalls'), { auth: ts.admin });
    expect(listed.json.map((c: { sid: string }) => c.sid)).toEqual([live.sid]);
    // The tenant sees its own call with Scope=account.
    const own = await ts.request('GET', supervisor(tenant.sid, '/livecalls?Scope=account'), {
      auth: tenant.creds,
    });
    expect(own.json.map((c: { sid: string }) => c.sid)).toEqual([live.sid]);

    expect((await call).errors).toBe('');
    const after = await until(metrics, (m) => m.Metrics.LiveCalls === 0);
    expect(after.Metrics.LiveCalls).toBe(0);
    expect(after.LiveCallDetails).toEqual([]);
    expect(after.Metrics.TotalCallsSinceUptime).toBe(before.TotalCallsSinceUptime + 1);
    expect(after.Metrics.IncomingCallsSinceUptime).toBe(before.IncomingCallsSinceUptime + 1);
    expect(after.Metrics.CompletedCalls).toBe(before.CompletedCalls + 1);
    expect(after.Metrics.AverageCallDurationInSecondsLastHour).toBeGreaterThanOrEqual(3);
  });

  it('counts a bridged <Dial> as two live calls, one in and one out, and none after', async () => {
    const uas = await startSipp({ scenario: 'uas-answer-expect-bye.xml', localIp: '127.0.0.3' });
    hooks.script(
      '/dial',
      xml(`<Dial timeLimit="4" timeout="10"><Sip>sip:bob@127.0.0.3:${uas.localPort}</Sip></Dial><Hangup/>`),
    );
    const number = await numberFor('/dial', '+15550301002');
    const call = runSipp({ scenario: 'uac-call-expect-bye.xml', remote: target, service: number });
    const during = await until(
      metrics,
      (m) =>
        m.Metrics.LiveCalls === 2 &&
        m.LiveCallDetails.every((c: { State: string }) => c.State === 'IN_PROGRESS'),
    );
    expect(during.Metrics).toMatchObject({ LiveCalls: 2, LiveIncomingCalls: 1, LiveOutgoingCalls: 1 });
    const out = during.LiveCallDetails.find((c: { direction: string }) => c.direction === 'outbound-dial');
    expect(out).toMatchObject({
      type: 'SIP',
      to: `sip:bob@127.0.0.3:${uas.localPort}`,
      'Initial Invite': expect.stringMatching(/^sip:bob@127\.0\.0\.3/),
      'Last Response': 200,
    });
    expect(during.Metrics.MaximumConcurrentCalls).toBeGreaterThanOrEqual(2);
    expect(during.Metrics.MaximumConcurrentOutgoingCalls).toBeGreaterThanOrEqual(1);

    expect((await call).errors).toBe('');
    expect((await uas.done).errors).toBe('');
    const after = await until(metrics, (m) => m.Metrics.LiveCalls === 0);
    expect(after.Metrics).toMatchObject({ LiveCalls: 0, LiveIncomingCalls: 0, LiveOutgoingCalls: 0 });
    expect(after.LiveCallDetails).toEqual([]);
  });

  it('Scope=cluster sums the figures every node sharing the Redis publishes, and lists each node', async () => {
    const b = await startTestServer({ ns: ts.ns, env: { SIP_ENABLED: 'false' } });
    try {
      const a = ts.server.config.instanceId;
      const bId = b.server.config.instanceId;
      const cluster = async () =>
        (
          await b.request('GET', supervisor(b.admin.sid, '/metrics?Scope=cluster'), {
            auth: b.admin,
          })
        ).json;
      const seen = await until(cluster, (j) => j.Nodes?.length === 2);
      expect(seen.Scope).toBe('cluster');
      expect(seen.InstanceId).toBe(bId);
      expect(seen.Nodes.map((n: { InstanceId: string }) => n.InstanceId).sort()).toEqual([a, bId].sort());
      expect(Object.keys(seen.Metrics).sort()).toEqual([...METRICS].sort());
      const ofA = seen.Nodes.find((n: { InstanceId: string }) => n.InstanceId === a).Metrics;
      const ofB = seen.Nodes.find((n: { InstanceId: string }) => n.InstanceId === bId).Metrics;
      // Node A ran the calls above; B none. The sum is A's (as A last published it) plus B's.
      expect(ofA.TotalCallsSinceUptime).toBeGreaterThanOrEqual(2);
      expect(ofA.OutgoingCallsSinceUptime).toBeGreaterThanOrEqual(1);
      expect(ofB.TotalCallsSinceUptime).toBe(0);
      for (const m of ['TotalCallsSinceUptime', 'CompletedCalls', 'MaximumConcurrentCalls'])
        expect(seen.Metrics[m], m).toBe(ofA[m] + ofB[m]);
      expect(seen.Metrics.AverageCallDurationInSecondsLast24Hours).toBe(
        ofA.AverageCallDurationInSecondsLast24Hours,
      );
      const total = await b.request('GET', supervisor(b.admin.sid, '?Scope=cluster'), { auth: b.admin });
      expect(total.json.TotalCalls).toBe(seen.Metrics.TotalCallsSinceUptime);

      const refused = await ts.request('GET', supervisor(tenant.sid, '/metrics?Scope=cluster'), {
        auth: tenant.creds,
      });
      expect(refused.status).toBe(403);
      const live = await ts.request('GET', supervisor(ts.admin.sid, '/livecalls?Scope=cluster'), {
        auth: ts.admin,
      });
      expect(live.status).toBe(400);
    } finally {
      await b.stop();
    }
    // A node that stops withdraws its figures.
    const after = await ts.request('GET', supervisor(ts.admin.sid, '/metrics?Scope=cluster'), {
      auth: ts.admin,
    });
    expect(after.json.Nodes.map((n: { InstanceId: string }) => n.InstanceId)).toEqual([
      ts.server.config.instanceId,
    ]);
  });

  it('figures of a node that stopped publishing expire', async () => {
    let now = Date.now();
    const store = new RedisSupervisorFigures(ts.server.redis, redisKeys(ts.ns.redisPrefix), () => now);
    await store.publish({ instanceId: 'IDgone', at: now, figures: { TotalCallsSinceUptime: 5 } }, 1000);
    expect((await store.list()).map((n) => n.instanceId)).toContain('IDgone');
    now += 1001;
    expect((await store.list()).map((n) => n.instanceId)).not.toContain('IDgone');
  });
});
