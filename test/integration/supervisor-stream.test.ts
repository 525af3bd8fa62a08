/**
 * The supervisor's live stream against a real server and sipp: a snapshot, then call.created →
 * call.updated (in-progress) → call.ended for a sipp call in seq order; a client reconnecting with
 * `since` gets exactly the deltas it missed; a client that stops reading is disconnected with 1013
 * and the server lets go of it, one that misses a heartbeat ping is dropped; Basic and single-use ticket auth with the Supervisor API's role
 * rules (401, 403, 404); two nodes on one Redis: a call on node A reaches a client of node B.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamClient, type StreamFrame, UpgradeRefused } from '../../ops/lib/stream-client.js';
import { initialContext } from '../../src/actors/call/call.setup.js';
import type { CallEmitted } from '../../src/actors/call/call.types.js';
import { API, type Credentials, startTestServer, type TestServer } from '../support/server.js';
import { runSipp } from '../support/sipp.js';
import { until, markup as xml } from '../support/until.js';
import { startWebhookServer, type WebhookServer } from '../support/webhook-server.js';

let ts: TestServer;
let hooks: WebhookServer;
let tenant: { sid: string; creds: Credentials };
let target: string;
const open: StreamClient[] = [];

// A small send buffer so a paused client overflows it quickly.
const BUFFER = 64 * 1024;

beforeAll(async () => {
  ts = await startTestServer({
    label: 'sup-stream',
    env: { SUPERVISOR_STREAM_BUFFER_BYTES: String(BUFFER) },
  });
  hooks = await startWebhookServer();
  const r = await ts.request('POST', `${API}/Accounts.json`, {
    auth: ts.admin,
    form: { EmailAddress: 'stream-admin@example.test', Password: 'password-123', Role: 'Administrator' },
  });
  tenant = { sid: r.json.sid, creds: { user: r.json.sid, secret: r.json.auth_token } };
  target = `127.0.0.1:${ts.server.sip!.stack.port}`;
});
afterAll(async () => {
  for (const c of open) c.close();
  await hooks?.close();
  await ts?.dispose();
});

async function connect(
  auth: Credentials | null = ts.admin,
  query: Record<string, string> = {},
  accountSid = ts.admin.sid,
): Promise<StreamClient> {
  const c = await StreamClient.open({ url: ts.url, accountSid, query, ...(auth ? { auth } : {}) });
  open.push(c);
  return c;
}

async function refusal(p: Promise<unknown>): Promise<number> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UpgradeRefused);
  return (err as UpgradeRefused).status;
}

async function numberFor(path: string, number: string): Promise<string> {
  const r = await ts.request('POST', `${API}/Accounts/${tenant.sid}/IncomingPhoneNumbers.json`, {
    auth: tenant.creds,
    form: { PhoneNumber: number, VoiceUrl: `${hooks.origin}${path}` },
  });
  expect(r.status).toBe(201);
  return number;
}

const callOf = (f: StreamFrame) => f.call as { sid: string; status: string } | undefined;
const deltas = (frames: StreamFrame[]) => frames.filter((f) => f.type.startsWith('call.'));

describe('supervisor stream', () => {
  it('sends a snapshot, then created → in-progress → ended for a sipp call, in seq order', async () => {
    hooks.script('/pause', xml('<Pause length="2"/><Hangup/>'));
    const number = await numberFor('/pause', '+15550401001');
    const client = await connect();
    const snapshot = await client.next((f) => f.type === 'snapshot');
    expect(snapshot).toMatchObject({ seq: expect.any(Number), at: expect.any(Number), calls: [] });
    expect(snapshot.metrics).toMatchObject({ LiveCalls: 0 });
    // The tenant's Administrator watches its own tree on the same node.
    const own = await connect(tenant.creds, { Scope: 'account' }, tenant.sid);

    const sipp = await runSipp({ scenario: 'uac-call-expect-bye.xml', remote: target, service: number });
    expect(sipp.errors).toBe('');
    const ended = await client.next((f) => f.type === 'call.ended');
    const sid = callOf(ended)!.sid;
    const mine = client.frames.filter((f) => callOf(f)?.sid === sid);
    expect(mine[0]).toMatchObject({ type: 'call.created', call: { sid, direction: 'inbound', to: number } });
    const progress = mine.findIndex((f) => f.type === 'call.updated' && callOf(f)?.status === 'in-progress');
    expect(progress).toBeGreaterThan(0);
    expect(mine.at(-1)).toMatchObject({
      type: 'call.ended',
      status: 'completed',
      cause: expect.any(String),
      duration: expect.any(Number),
    });
    expect(mine.findIndex((f) => f.type === 'call.ended')).toBe(mine.length - 1);
    const seqs = deltas(client.frames).map((f) => f.seq);
    expect(seqs[0]).toBe(snapshot.seq + 1);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBe((seqs[i - 1] as number) + 1);
    // The tenant's client saw the same deltas of its call.
    await own.next((f) => f.type === 'call.ended');
    expect(deltas(own.frames).map((f) => f.seq)).toEqual(mine.map((f) => f.seq));
  });

  it('replays exactly the missed deltas to a client reconnecting with since', async () => {
    hooks.script('/short', xml('<Pause length="1"/><Hangup/>'));
    const number = await numberFor('/short', '+15550401002');
    const witness = await connect();
    const leaving = await connect();
    await leaving.next((f) => f.type === 'snapshot');
    const since = leaving.lastSeq;
    leaving.close();

    const sipp = await runSipp({ scenario: 'uac-call-expect-bye.xml', remote: target, service: number });
    expect(sipp.errors).toBe('');
    await witness.next((f) => f.type === 'call.ended' && f.seq > since);
    const missed = deltas(witness.frames).filter((f) => f.seq > since);
    expect(missed.length).toBeGreaterThanOrEqual(3);

    const back = await connect(ts.admin, { since: String(since) });
    await back.next((f) => f.seq === (missed.at(-1) as StreamFrame).seq);
    expect(back.frames.some((f) => f.type === 'snapshot')).toBe(false);
    expect(back.frames.filter((f) => f.type !== 'metrics')).toEqual(missed);

    // A seq the node never gave out: a fresh snapshot rather than silence.
    const lost = await connect(ts.admin, { since: String(since + 1_000_000) });
    expect((await lost.next(() => true)).type).toBe('snapshot');
  });

  it('shows a call on node A to a client of node B sharing the Redis', async () => {
    hooks.script('/cluster', xml('<Pause length="1"/><Hangup/>'));
    const number = await numberFor('/cluster', '+15550401003');
    const b = await startTestServer({ ns: ts.ns, env: { SIP_ENABLED: 'false' } });
    try {
      const client = await StreamClient.open({ url: b.url, accountSid: b.admin.sid, auth: b.admin });
      open.push(client);
      await client.next((f) => f.type === 'snapshot');
      const sipp = await runSipp({ scenario: 'uac-call-expect-bye.xml', remote: target, service: number });
      expect(sipp.errors).toBe('');
      const ended = await client.next((f) => f.type === 'call.ended');
      const sid = callOf(ended)!.sid;
      const seen = client.frames.filter((f) => callOf(f)?.sid === sid);
      expect(seen[0]).toMatchObject({
        type: 'call.created',
        call: { node: ts.server.config.instanceId, to: number },
      });
      expect(seen.some((f) => callOf(f)?.status === 'in-progress')).toBe(true);
      // Numbered in B's own sequence, with no gap.
      const seqs = deltas(client.frames).map((f) => f.seq);
      expect(seqs).toEqual(seqs.map((_, i) => (seqs[0] as number) + i));
    } finally {
      await b.stop();
    }
  });

  it('disconnects a client that stops reading with 1013 and lets go of it', async () => {
    const stream = ts.server.liveStream;
    const before = stream.subscriberCount;
    const slow = await connect();
    await slow.next((f) => f.type === 'snapshot');
    expect(stream.subscriberCount).toBe(before + 1);
    slow.pause();
    const rssBefore = process.memoryUsage().rss;
    // Synthetic deltas, fed to the stream as the call event bus would, far more than the socket holds.
    const padding = 'x'.repeat(1024);
    for (let i = 0; i < 20_000 && stream.subscriberCount > before; i++) {
      const call = initialContext({
        sid: `CA${String(i).padStart(32, '0')}`,
        accountSid: ts.admin.sid,
        direction: 'outbound-api',
        from: `+1555${padding}`,
        to: '+15550009999',
        apiVersion: '2012-04-24',
        createdAt: Date.now(),
      });
      const events: CallEmitted[] = [
        { type: 'call.created', call, at: Date.now() },
        {
          type: 'call.ended',
          call: { ...call, endedAt: Date.now() },
          status: 'canceled',
          cause: 'api',
          sipStatus: null,
          duration: 0,
          at: Date.now(),
        },
      ];
      for (const e of events) stream.observe(e);
      if (i % 100 === 0) await new Promise((r) => setImmediate(r));
    }
    expect(stream.subscriberCount).toBe(before);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(96 * 1024 * 1024);
    slow.resume();
    const closed = await slow.whenClosed(20_000);
    expect(closed).toEqual({ code: 1013, reason: expect.stringMatching(/too slow/) });
  });

  it('drops a client that stops answering the heartbeat ping', async () => {
    const b = await startTestServer({
      ns: ts.ns,
      env: { SIP_ENABLED: 'false', SUPERVISOR_STREAM_HEARTBEAT_MS: '200' },
    });
    try {
      const live = await StreamClient.open({ url: b.url, accountSid: b.admin.sid, auth: b.admin });
      const dead = await StreamClient.open({ url: b.url, accountSid: b.admin.sid, auth: b.admin });
      open.push(live, dead);
      await dead.next((f) => f.type === 'snapshot');
      expect(b.server.liveStream.subscriberCount).toBe(2);
      dead.pause(); // reads nothing, so answers no ping
      const count = await until(
        () => b.server.liveStream.subscriberCount,
        (n) => n === 1,
        5_000,
      );
      expect(count).toBe(1);
      dead.resume();
      expect((await dead.whenClosed(5_000))?.code).toBe(1006); // terminated, no close handshake
      // A client that reads answers the pings by itself and stays.
      await new Promise((r) => setTimeout(r, 500));
      expect(live.closed).toBeNull();
    } finally {
      await b.stop();
    }
  });

  it('applies the Supervisor API role rules to Basic and to single-use tickets', async () => {
    expect(await refusal(connect(null))).toBe(401);
    expect(await refusal(connect({ user: ts.admin.sid, secret: 'wrong' }))).toBe(401);
    // A sub-account Administrator: not the node, yes its own tree, never another account.
    expect(await refusal(connect(tenant.creds, {}, tenant.sid))).toBe(403);
    expect(await refusal(connect(tenant.creds, { Scope: 'account' }, ts.admin.sid))).toBe(404);
    expect(await refusal(connect(ts.admin, { Scope: 'galaxy' }))).toBe(400);
    expect(await refusal(connect(ts.admin, {}, '%zz'))).toBe(404);
    // Other upgrade paths on the HTTP port are not WebSockets.
    const other = await refusal(
      StreamClient.open({ url: `${ts.url}/nowhere`, accountSid: ts.admin.sid, auth: ts.admin }),
    );
    expect(other).toBe(404);

    const issued = await ts.request('POST', `${API}/Accounts/${tenant.sid}/Supervisor.json/tickets`, {
      auth: tenant.creds,
    });
    expect(issued.status).toBe(201);
    expect(issued.json).toEqual({ ticket: expect.any(String), expires_in: expect.any(Number) });
    const { ticket } = issued.json;
    const byTicket = await connect(null, { ticket, Scope: 'account' }, tenant.sid);
    expect((await byTicket.next(() => true)).type).toBe('snapshot');
    expect(await refusal(connect(null, { ticket, Scope: 'account' }, tenant.sid))).toBe(401);
    expect(await refusal(connect(null, { ticket: 'nope' }))).toBe(401);
    // A ticket carries its holder's rights: the tenant's cannot open the node's stream.
    const second = await ts.request('POST', `${API}/Accounts/${tenant.sid}/Supervisor.json/tickets`, {
      auth: tenant.creds,
    });
    expect(await refusal(connect(null, { ticket: second.json.ticket }, tenant.sid))).toBe(403);
    const unauthenticated = await ts.request(
      'POST',
      `${API}/Accounts/${tenant.sid}/Supervisor.json/tickets`,
      {
        auth: null,
      },
    );
    expect(unauthenticated.status).toBe(401);
  });
});
