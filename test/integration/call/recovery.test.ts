/**
 * A node dies with a call up: the next node (here a fresh one on the same Postgres and Redis) finds
 * the call's claim expired, sends BYE with the dialog persisted in the call's snapshot and closes the
 * call record, and sends the StatusCallback's `completed` the call still owed; a REST call still
 * queued on the dead node is restored from its snapshot and placed by the next node. Node A runs as
 * its own process so that it can be killed outright (SIGKILL).
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyTwilioSignature } from '../../../src/webhooks/index.js';
import { adminApi as api } from '../../support/admin-api.js';
import { createNamespace, type TestNamespace } from '../../support/namespace.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, API, startTestServer, type TestServer } from '../../support/server.js';
import { startServerProcess } from '../../support/server-process.js';
import { startSipp } from '../../support/sipp.js';
import { until, markup as xml } from '../../support/until.js';
import { startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';

const HOST = '127.0.0.1';
const LEASE_SECONDS = '3';
let ns: TestNamespace;
let hooks: WebhookServer;
let nodeA: ChildProcess | null = null;
let nodeB: TestServer | null = null;

beforeAll(async () => {
  ns = await createNamespace('recovery');
  hooks = await startWebhookServer();
});
afterAll(async () => {
  if (nodeA && nodeA.exitCode === null && nodeA.signalCode === null) nodeA.kill('SIGKILL');
  // nodeB's dispose drops the namespace too.
  if (nodeB) await nodeB.dispose();
  else await ns?.dispose();
  await hooks?.close();
});

/** Starts node A as its own process (so that it can be SIGKILLed); resolves once its API answers. */
async function startNodeA(
  env: Record<string, string> = {},
): Promise<{ base: string; sipPort: number; accountSid: string }> {
  const a = await startServerProcess(ns, {
    entry: 'src',
    admin: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
    host: HOST,
    env: { CALL_LEASE_SECONDS: LEASE_SECONDS, ...env },
  });
  nodeA = a.child;
  return { base: a.base, sipPort: a.sipPort!, accountSid: a.admin.sid };
}

async function killNodeA(): Promise<void> {
  nodeA!.kill('SIGKILL');
  await once(nodeA!, 'exit');
}

describe('recovery of the calls of a node that died', () => {
  it('ends an answered call with BYE from its persisted dialog and closes its record', async () => {
    const { base, sipPort, accountSid } = await startNodeA();
    hooks.script('/hold', xml('<Pause length="120"/>'));
    const n = await api(base, `${API}/Accounts/${accountSid}/IncomingPhoneNumbers.json`, {
      PhoneNumber: '+15550500001',
      VoiceUrl: `${hooks.origin}/hold`,
    });
    expect(n.status).toBe(201);

    // The caller waits for a BYE (and answers it with 200); nobody but the recovery will send one.
    const caller = await startSipp({
      scenario: 'uac-call-expect-bye.xml',
      remote: `${HOST}:${sipPort}`,
      service: '+15550500001',
      timeoutSeconds: 60,
    });
    const live = await until(
      async () => (await api(base, `${API}/Accounts/${accountSid}/Calls.json?To=%2B15550500001`)).json,
      (j) => (j?.calls as Array<{ status: string }> | undefined)?.[0]?.status === 'in-progress',
      15_000,
    );
    const callSid = (live!.calls as Array<{ sid: string }>)[0]!.sid;
    await new Promise((r) => setTimeout(r, 500)); // the ACK's snapshot (with the dialog) is written

    await killNodeA();

    nodeB = await startTestServer({ ns, env: { CALL_LEASE_SECONDS: LEASE_SECONDS } });
    const result = await caller.done;
    expect(result.errors).toBe('');
    expect(result.code).toBe(0);
    const record = await until(
      async () =>
        (
          await nodeB!.request('GET', `${API}/Accounts/${accountSid}/Calls/${callSid}.json`, {
            auth: nodeB!.admin,
          })
        ).json,
      (c) => c?.status === 'completed',
      15_000,
    );
    expect(record).toMatchObject({ status: 'completed', direction: 'inbound' });
    expect(record.end_time).toBeTruthy();
    expect(record.duration).toBeGreaterThanOrEqual(1);
  }, 90_000);

  it('a REST call: the callee gets BYE and the StatusCallback its completed event, signed and in sequence', async () => {
    // Node B from the first test is up and sweeping; a new node A places the call.
    const { base, accountSid } = await startNodeA();
    hooks.script('/rest-hold', xml('<Pause length="120"/>'));
    hooks.script('/rest-status', { status: 204 });
    const callee = await startSipp({
      scenario: 'uas-answer-expect-bye.xml',
      localIp: '127.0.0.3',
      timeoutSeconds: 60,
    });
    const created = await api(base, `${API}/Accounts/${accountSid}/Calls.json`, {
      From: '+15550500009',
      To: `sip:bob@127.0.0.3:${callee.localPort}`,
      Url: `${hooks.origin}/rest-hold`,
      StatusCallback: `${hooks.origin}/rest-status`,
      StatusCallbackEvent: 'initiated ringing answered completed',
    });
    expect(created.status).toBe(201);
    const sid = created.json!.sid as string;
    await until(
      async () => (await api(base, `${API}/Accounts/${accountSid}/Calls/${sid}.json`)).json?.status,
      (st) => st === 'in-progress',
      15_000,
    );
    await new Promise((r) => setTimeout(r, 500));
    await killNodeA();
    expect((await callee.done).errors).toBe('');
    const completed = await until(
      () =>
        hooks
          .requestsTo('/rest-status')
          .map((q) => ({
            form: new URLSearchParams(q.rawBody.toString()),
            signature: q.headers['x-twilio-signature'],
          }))
          .filter((x) => x.form.get('CallSid') === sid && x.form.get('CallStatus') === 'completed'),
      (l) => l.length > 0,
      15_000,
    );
    expect(completed).toHaveLength(1);
    expect(completed[0]!.form.get('SequenceNumber')).toBe('3');
    expect(Number(completed[0]!.form.get('CallDuration'))).toBeGreaterThanOrEqual(1);
    // Signed with the account's AuthToken (node B read it from the shared database).
    expect(
      verifyTwilioSignature(
        `${hooks.origin}/rest-status`,
        Object.fromEntries(completed[0]!.form),
        nodeB!.admin.secret,
        completed[0]!.signature as string,
      ),
    ).toBe(true);
  }, 90_000);

  it('a REST call queued on the dead node is restored by the next node, which places it', async () => {
    // One call at a time on node A: the second REST call waits in its admission queue.
    const { base, accountSid } = await startNodeA({ ACCOUNT_MAX_CONCURRENT_CALLS: '1' });
    hooks.script('/queued-hold', xml('<Pause length="120"/>'));
    const first = await startSipp({
      scenario: 'uas-answer-expect-bye.xml',
      localIp: '127.0.0.3',
      timeoutSeconds: 60,
    });
    const second = await startSipp({
      scenario: 'uas-answer-expect-bye.xml',
      localIp: '127.0.0.3',
      timeoutSeconds: 60,
    });
    const place = (port: number) =>
      api(base, `${API}/Accounts/${accountSid}/Calls.json`, {
        From: '+15550500010',
        To: `sip:bob@127.0.0.3:${port}`,
        Url: `${hooks.origin}/queued-hold`,
      });
    const a = await place(first.localPort);
    const b = await place(second.localPort);
    expect([a.status, b.status]).toEqual([201, 201]);
    const [sidA, sidB] = [a.json!.sid as string, b.json!.sid as string];
    await until(
      async () => (await api(base, `${API}/Accounts/${accountSid}/Calls/${sidA}.json`)).json?.status,
      (st) => st === 'in-progress',
      15_000,
    );
    expect((await api(base, `${API}/Accounts/${accountSid}/Calls/${sidB}.json`)).json?.status).toBe('queued');
    await new Promise((r) => setTimeout(r, 500));
    await killNodeA();

    // Node B (still sweeping from the first test) ends the answered call and places the queued one.
    expect((await first.done).errors).toBe('');
    const get = async (sid: string) =>
      (await nodeB!.request('GET', `${API}/Accounts/${accountSid}/Calls/${sid}.json`, { auth: nodeB!.admin }))
        .json;
    expect(
      await until(
        () => get(sidB),
        (c) => c?.status === 'in-progress',
        20_000,
      ),
    ).toMatchObject({
      status: 'in-progress',
      direction: 'outbound-api',
    });
    // It is a working call on node B: its markup runs there and the API hangs it up (BYE).
    await until(
      () =>
        hooks
          .requestsTo('/queued-hold')
          .filter((q) => new URLSearchParams(q.rawBody.toString()).get('CallSid') === sidB),
      (l) => l.length > 0,
      10_000,
    );
    const hangup = await nodeB!.request('POST', `${API}/Accounts/${accountSid}/Calls/${sidB}.json`, {
      auth: nodeB!.admin,
      form: { Status: 'completed' },
    });
    expect(hangup.status).toBe(200);
    expect((await second.done).errors).toBe('');
    expect(
      await until(
        () => get(sidB),
        (c) => c?.status === 'completed',
        10_000,
      ),
    ).toMatchObject({ status: 'completed' });
    expect((await get(sidA))?.status).toBe('completed');
  }, 120_000);
});
