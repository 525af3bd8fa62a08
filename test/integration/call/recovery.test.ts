/**
 * A node dies with a call up: the next node (here a fresh one on the same Postgres and Redis) finds
 * the call's claim expired, sends BYE with the dialog persisted in the call's snapshot and closes the
 * call record. Node A runs as its own process so that it can be killed outright (SIGKILL).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNamespace, type TestNamespace } from '../../support/namespace.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, API, startTestServer, type TestServer } from '../../support/server.js';
import { freePort, startSipp } from '../../support/sipp.js';
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

const auth = `Basic ${Buffer.from(`${ADMIN_EMAIL}:${ADMIN_PASSWORD}`).toString('base64')}`;
async function api(base: string, path: string, form?: Record<string, string>) {
  const r = await fetch(`${base}${path}`, {
    method: form ? 'POST' : 'GET',
    headers: {
      authorization: auth,
      ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
    },
    ...(form ? { body: new URLSearchParams(form).toString() } : {}),
  });
  return { status: r.status, json: (await r.json().catch(() => null)) as Record<string, unknown> | null };
}

describe('recovery of the calls of a node that died', () => {
  it('ends an answered call with BYE from its persisted dialog and closes its record', async () => {
    const httpPort = await freePort(HOST);
    const sipPort = await freePort(HOST);
    const base = `http://${HOST}:${httpPort}`;
    nodeA = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: {
        ...process.env,
        LOG_LEVEL: 'silent',
        HTTP_HOST: HOST,
        HTTP_PORT: String(httpPort),
        SIP_HOST: HOST,
        SIP_PORT: String(sipPort),
        DATABASE_URL: ns.databaseUrl,
        REDIS_PREFIX: ns.redisPrefix,
        ADMIN_EMAIL,
        ADMIN_PASSWORD,
        CALL_LEASE_SECONDS: LEASE_SECONDS,
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const me = await until(
      () => api(base, `${API}/Accounts/${encodeURIComponent(ADMIN_EMAIL)}.json`).catch(() => null),
      (r) => r?.status === 200,
      30_000,
    );
    const accountSid = me!.json!.sid as string;
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

    nodeA.kill('SIGKILL');
    await once(nodeA, 'exit');

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
});
