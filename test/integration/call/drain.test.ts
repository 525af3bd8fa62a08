/**
 * Graceful drain on SIGTERM, with the server as its own process: new INVITEs get 503, `/ready` turns
 * 503 and REST calls are refused, while the live call runs to its end and the REST API still
 * answers; then the process exits 0. With a short DRAIN_TIMEOUT, a call still up is ended by the
 * node (BYE, `completed` callback) before it exits.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminApi as api } from '../../support/admin-api.js';
import { createNamespace, type TestNamespace } from '../../support/namespace.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, API } from '../../support/server.js';
import { type ServerProcess, startServerProcess } from '../../support/server-process.js';
import { SipPeer, statusOf } from '../../support/sip-peer.js';
import { startSipp } from '../../support/sipp.js';
import { until, markup as xml } from '../../support/until.js';
import { startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';

const HOST = '127.0.0.1';
let ns: TestNamespace;
let hooks: WebhookServer;
let peer: SipPeer;
const children: ChildProcess[] = [];

beforeAll(async () => {
  ns = await createNamespace('drain');
  hooks = await startWebhookServer();
  peer = await SipPeer.open('127.0.0.2');
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await ns?.dispose();
  await hooks?.close();
  peer?.close();
});

async function node(drainSeconds: number): Promise<ServerProcess> {
  const n = await startServerProcess(ns, {
    entry: 'src',
    admin: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
    host: HOST,
    env: { DRAIN_TIMEOUT: String(drainSeconds) },
  });
  children.push(n.child);
  return n;
}

/** A call to a new number of the node whose markup is `body`, answered and in progress. */
async function liveCall(n: ServerProcess, number: string, body: string) {
  hooks.script(`/app${number}`, xml(body));
  hooks.script(`/status${number}`, { status: 204 });
  const created = await api(n.base, `${API}/Accounts/${n.admin.sid}/IncomingPhoneNumbers.json`, {
    PhoneNumber: number,
    VoiceUrl: `${hooks.origin}/app${number}`,
    StatusCallback: `${hooks.origin}/status${number}`,
  });
  expect(created.status).toBe(201);
  const caller = await startSipp({
    scenario: 'uac-call-expect-bye.xml',
    remote: `${HOST}:${n.sipPort}`,
    service: number,
    timeoutSeconds: 60,
  });
  await until(
    async () =>
      (await api(n.base, `${API}/Accounts/${n.admin.sid}/Calls.json?To=${encodeURIComponent(number)}`)).json,
    (j) => (j?.calls as Array<{ status: string }> | undefined)?.[0]?.status === 'in-progress',
    15_000,
  );
  return caller;
}

/** Sends an out-of-dialog INVITE from the raw peer and returns the final status. */
async function probeInvite(sipPort: number): Promise<number> {
  const callId = `drain-${Date.now()}@127.0.0.2`;
  peer.send(
    [
      `INVITE sip:+15550600099@${HOST}:${sipPort} SIP/2.0`,
      `Via: SIP/2.0/UDP 127.0.0.2:${peer.port};branch=z9hG4bK${Date.now()}`,
      'Max-Forwards: 70',
      `From: <sip:probe@127.0.0.2>;tag=p1`,
      `To: <sip:+15550600099@${HOST}>`,
      `Call-ID: ${callId}`,
      'CSeq: 1 INVITE',
      `Contact: <sip:probe@127.0.0.2:${peer.port}>`,
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n'),
    sipPort,
  );
  const finals = await until(
    async () => peer.inbox.filter((m) => m.includes(callId) && statusOf(m) >= 200),
    (l) => l.length > 0,
    5000,
  );
  return statusOf(finals[0] as string);
}

const completedCallbacks = (number: string) =>
  hooks
    .requestsTo(`/status${number}`)
    .map((q) => new URLSearchParams(q.rawBody.toString()))
    .filter((f) => f.get('CallStatus') === 'completed');

describe('graceful drain', () => {
  it('SIGTERM: new calls refused, the live call runs to its end, then exit 0', async () => {
    const n = await node(30);
    const caller = await liveCall(n, '+15550600001', '<Pause length="4"/><Hangup/>');
    n.child.kill('SIGTERM');
    const exited = once(n.child, 'exit');

    // The signal reaches the process a moment later: /ready says when it is draining.
    const ready = await until(
      async () => {
        const r = await fetch(`${n.base}/ready`);
        return { status: r.status, body: (await r.json()) as { checks: Record<string, { status: string }> } };
      },
      (r) => r.status === 503,
      5000,
    );
    expect(ready.body.checks.accepting?.status).toBe('down');
    expect(await probeInvite(n.sipPort as number)).toBe(503);
    expect((await api(n.base, `${API}/Accounts/${n.admin.sid}.json`)).status).toBe(200);
    const refused = await api(n.base, `${API}/Accounts/${n.admin.sid}/Calls.json`, {
      From: '+15550600002',
      To: 'sip:nobody@127.0.0.9:5060',
      Url: `${hooks.origin}/app+15550600001`,
    });
    expect(refused.status).toBe(503);

    // The markup ends the call (BYE after the pause), and only then the process leaves.
    const result = await caller.done;
    expect(result.errors).toBe('');
    expect(result.code).toBe(0);
    const [code] = await exited;
    expect(code).toBe(0);
    expect(completedCallbacks('+15550600001')).toHaveLength(1);
  }, 60_000);

  it('DRAIN_TIMEOUT passed: the node ends the live call itself, with its callback, then exits 0', async () => {
    const n = await node(1);
    const caller = await liveCall(n, '+15550600003', '<Pause length="60"/>');
    const signalled = Date.now();
    n.child.kill('SIGTERM');
    const result = await caller.done;
    expect(result.errors).toBe('');
    expect(result.code).toBe(0);
    // Ended by the drain (1 s), not by the 60 s pause.
    expect(Date.now() - signalled).toBeLessThan(15_000);
    const [code] = await once(n.child, 'exit');
    expect(code).toBe(0);
    const completed = await until(
      async () => completedCallbacks('+15550600003'),
      (l) => l.length > 0,
      5000,
    );
    expect(completed).toHaveLength(1);
  }, 60_000);
});
