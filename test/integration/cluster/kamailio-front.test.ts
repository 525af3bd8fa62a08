/**
 * Kamailio in front of two nodes (ops/kamailio/switchboard.cfg): sipp calls through the front at a
 * steady rate while one node leaves. SIGTERM: the node drains (503 to new INVITEs and to the probe,
 * its live calls finish) and not one call fails. SIGKILL: the front fails new INVITEs over to the
 * survivor after its 1 s timer, only calls that were up on the dead node fail, and those end on the
 * survivor (recovery) with one terminal status each.
 */
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sipp } from '../../../ops/bench/support.js';
import { type Kamailio, startKamailio } from '../../../ops/lib/kamailio.js';
import { adminApi as api } from '../../support/admin-api.js';
import { createNamespace, type TestNamespace } from '../../support/namespace.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, API } from '../../support/server.js';
import { type ServerProcess, startServerProcess } from '../../support/server-process.js';
import { freePort } from '../../support/sipp.js';
import { until, markup as xml } from '../../support/until.js';
import { startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';

const FRONT = '127.0.0.5';
const NUMBER = '+15550800001';
let ns: TestNamespace;
let hooks: WebhookServer;
const nodes: ServerProcess[] = [];
/** The node of the first test that stays up: the second test's survivor. */
let survivor: ServerProcess | null = null;
let front: Kamailio | null = null;

async function node(): Promise<ServerProcess> {
  const n = await startServerProcess(ns, {
    entry: 'src',
    admin: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
    host: '127.0.0.1',
    env: { CALL_LEASE_SECONDS: '3', DRAIN_TIMEOUT: '30' },
  });
  nodes.push(n);
  return n;
}

/** A front for `ns`; `frTimerMs` is how long it waits for a node's first reply before the next node. */
async function frontFor(ns: readonly ServerProcess[], frTimerMs: number): Promise<Kamailio> {
  await front?.stop();
  front = await startKamailio({
    host: FRONT,
    port: await freePort(FRONT),
    nodes: ns.map((n) => `127.0.0.1:${n.sipPort}`),
    pingIntervalSeconds: 1,
    frTimerMs,
  });
  // Both nodes answered a probe: the front uses them all.
  await new Promise((r) => setTimeout(r, 1500));
  return front;
}

/** sipp through the front: `calls` calls at `rate`/s, each hung up by the caller after 1 s. */
const load = (k: Kamailio, calls: number, rate: number) =>
  sipp(
    [
      `${k.host}:${k.port}`,
      '-i',
      '127.0.0.2',
      '-s',
      NUMBER,
      '-r',
      String(rate),
      '-m',
      String(calls),
      '-d',
      '1000',
      '-timeout',
      '60',
      '-timeout_error',
    ],
    'uac-call-timed-then-hangup.xml',
  );

beforeAll(async () => {
  ns = await createNamespace('kamfront');
  hooks = await startWebhookServer();
  hooks.script('/hold', xml('<Pause length="30"/>'));
});
afterAll(async () => {
  await front?.stop();
  for (const n of nodes)
    if (n.child.exitCode === null && n.child.signalCode === null) n.child.kill('SIGKILL');
  await ns?.dispose();
  await hooks?.close();
});

describe('Kamailio in front of two nodes', () => {
  it('SIGTERM of a node under load: it drains, and no call fails', async () => {
    // Started together: a start-up takes many times its few seconds of CPU on a loaded machine.
    const [a, b] = await Promise.all([node(), node()]);
    survivor = b;
    const created = await api(a.base, `${API}/Accounts/${a.admin.sid}/IncomingPhoneNumbers.json`, {
      PhoneNumber: NUMBER,
      VoiceUrl: `${hooks.origin}/hold`,
    });
    expect(created.status).toBe(201);
    // A draining node refuses at once (503), so the failover timer is not what this test is about:
    // a long one keeps a node slowed by a loaded machine from being taken for a dead one.
    const k = await frontFor([a, b], 5000);
    const run = load(k, 60, 10);
    await new Promise((r) => setTimeout(r, 2500));
    a.child.kill('SIGTERM');
    const [stats, [code]] = await Promise.all([run, once(a.child, 'exit')]);
    expect(code).toBe(0);
    expect(stats.failed).toBe(0);
    expect(stats.successful).toBe(60);
  }, 180_000);

  it('SIGKILL of a node under load: the front fails over, the dead node’s calls end on the survivor', async () => {
    const b = survivor as ServerProcess;
    const c = await node();
    const k = await frontFor([b, c], 1000);
    const run = load(k, 60, 10);
    await new Promise((r) => setTimeout(r, 2500));
    c.child.kill('SIGKILL');
    await once(c.child, 'exit');
    const stats = await run;
    // Only calls that were up on the dead node (about rate × call length) can fail; new ones are
    // sent to the survivor after the front's 1 s timer or once the probe marks the node down.
    expect(stats.successful + stats.failed).toBe(60);
    expect(stats.failed).toBeLessThanOrEqual(12);
    // Every call of the number ends with one terminal status (the survivor recovers the dead node's).
    const calls = await until(
      async () =>
        (
          await api(
            b.base,
            `${API}/Accounts/${b.admin.sid}/Calls.json?To=${encodeURIComponent(NUMBER)}&PageSize=1000`,
          )
        ).json?.calls as Array<{ sid: string; status: string }> | undefined,
      (l) => l?.every((x) => !['queued', 'ringing', 'in-progress'].includes(x.status)) === true,
      20_000,
    );
    expect(new Set(calls?.map((x) => x.sid)).size).toBe(calls?.length);
  }, 180_000);
});
