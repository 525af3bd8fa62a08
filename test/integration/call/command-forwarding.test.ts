/**
 * Commands reach the owner: two nodes on one Postgres and Redis; a REST call placed by node A is
 * muted, redirected and hung up through node B, which forwards each command to A (the call's claim
 * names it) and answers with what A saw. The callbacks come from A's actor: one increasing sequence.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, startTestServer, type TestServer } from '../../support/server.js';
import { startSipp } from '../../support/sipp.js';
import { until, markup as xml } from '../../support/until.js';
import { startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';

let a: TestServer;
let b: TestServer;
let hooks: WebhookServer;

beforeAll(async () => {
  // A short call lease: the last test's stopped node has its call recovered by node B quickly.
  a = await startTestServer({ label: 'forward', env: { CALL_LEASE_SECONDS: '5' } });
  b = await startTestServer({ ns: a.ns, env: { CALL_LEASE_SECONDS: '5' } });
  hooks = await startWebhookServer();
});
afterAll(async () => {
  await b?.stop();
  await a?.dispose();
  await hooks?.close();
});

describe('REST commands on a call held by another node', () => {
  it('mute, redirect and hang-up through node B act on node A’s call, callbacks in one sequence', async () => {
    hooks.script('/hold', xml('<Pause length="60"/>'));
    hooks.script('/moved', xml('<Pause length="60"/>'));
    hooks.script('/status', { status: 204 });
    const callee = await startSipp({
      scenario: 'uas-answer-expect-bye.xml',
      localIp: '127.0.0.3',
      timeoutSeconds: 60,
    });
    const created = await a.request('POST', `${API}/Accounts/${a.admin.sid}/Calls.json`, {
      form: {
        From: '+15550700001',
        To: `sip:bob@127.0.0.3:${callee.localPort}`,
        Url: `${hooks.origin}/hold`,
        StatusCallback: `${hooks.origin}/status`,
        StatusCallbackEvent: 'initiated ringing answered completed',
      },
    });
    expect(created.status).toBe(201);
    const sid = created.json.sid as string;
    const path = `${API}/Accounts/${a.admin.sid}/Calls/${sid}.json`;
    await until(
      async () => (await b.request('GET', path)).json.status,
      (s) => s === 'in-progress',
      15_000,
    );

    const muted = await b.request('POST', path, { form: { Mute: 'true' } });
    expect(muted.status).toBe(200);
    expect(muted.json).toMatchObject({ sid, status: 'in-progress', muted: true });

    const redirected = await b.request('POST', path, { form: { Url: `${hooks.origin}/moved` } });
    expect(redirected.status).toBe(200);
    // Node A's interpreter fetches the new document.
    await until(
      async () => hooks.requestsTo('/moved').length,
      (n) => n > 0,
      5000,
    );

    const ended = await b.request('POST', path, { form: { Status: 'completed' } });
    expect(ended.status).toBe(200);
    const result = await callee.done;
    expect(result.errors).toBe('');
    expect(result.code).toBe(0);

    const callbacks = await until(
      async () =>
        hooks
          .requestsTo('/status')
          .map((q) => new URLSearchParams(q.rawBody.toString()))
          .filter((f) => f.get('CallSid') === sid),
      (l) => l.some((f) => f.get('CallStatus') === 'completed'),
      10_000,
    );
    expect(callbacks.map((f) => f.get('CallStatus'))).toEqual([
      'initiated',
      'ringing',
      'in-progress',
      'completed',
    ]);
    expect(callbacks.map((f) => Number(f.get('SequenceNumber')))).toEqual([0, 1, 2, 3]);
  }, 60_000);

  it('a call that is not live anywhere answers 409 from either node', async () => {
    const busy = await startSipp({
      scenario: 'uas-busy-expect-ack.xml',
      localIp: '127.0.0.3',
      timeoutSeconds: 30,
    });
    const created = await a.request('POST', `${API}/Accounts/${a.admin.sid}/Calls.json`, {
      form: { From: '+15550700002', To: `sip:bob@127.0.0.3:${busy.localPort}`, Url: `${hooks.origin}/hold` },
    });
    const path = `${API}/Accounts/${a.admin.sid}/Calls/${created.json.sid}.json`;
    await until(
      async () => (await b.request('GET', path)).json.status,
      (s) => s === 'busy',
      15_000,
    );
    expect((await busy.done).code).toBe(0);
    expect((await b.request('POST', path, { form: { Status: 'completed' } })).status).toBe(409);
    expect((await a.request('POST', path, { form: { Status: 'completed' } })).status).toBe(409);
  }, 60_000);

  it('the owner gone but its claim still current: 503 with Retry-After at once, never a hang', async () => {
    hooks.script('/hold-gone', xml('<Pause length="60"/>'));
    const callee = await startSipp({
      scenario: 'uas-answer-expect-bye.xml',
      localIp: '127.0.0.3',
      timeoutSeconds: 60,
    });
    const created = await a.request('POST', `${API}/Accounts/${a.admin.sid}/Calls.json`, {
      form: {
        From: '+15550700003',
        To: `sip:bob@127.0.0.3:${callee.localPort}`,
        Url: `${hooks.origin}/hold-gone`,
      },
    });
    const path = `${API}/Accounts/${a.admin.sid}/Calls/${created.json.sid}.json`;
    await until(
      async () => (await b.request('GET', path)).json.status,
      (s) => s === 'in-progress',
      15_000,
    );
    // Node A stops without a drain: its claim on the call lasts until recovery's lease runs out.
    await a.stop();
    const started = Date.now();
    const r = await b.request('POST', path, { form: { Status: 'completed' } });
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toBe('2');
    expect(r.json.code).toBe(20503);
    expect(Date.now() - started).toBeLessThan(2000);
    // Once the claim runs out, node B recovers the call: the callee gets its BYE.
    expect((await callee.done).code).toBe(0);
  }, 60_000);
});
