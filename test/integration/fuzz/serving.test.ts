/**
 * One node under all three fuzzers at once. The server runs in its own process and gets malformed
 * SIP over UDP and TCP, hostile REST requests and calls whose markup is mutated, concurrently,
 * while a watcher keeps asking it for an account (every answer must be a 200) and OPTIONS. After
 * the storm no call is left live, its open files are back to the baseline taken after a warm-up
 * round, and its memory after a full GC is back near that baseline.
 *
 * Size: FUZZ_SCALE (default 1); seed: FUZZ_SEED (printed).
 */
import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectedMemory } from '../../../ops/lib/memory.js';
import { createNamespace, type TestNamespace } from '../../../ops/lib/namespace.js';
import { freePort } from '../../../ops/lib/ports.js';
import { type ServerProcess, startServerProcess } from '../../../ops/lib/server-process.js';
import type { RouteEntry } from '../../../src/http/router.js';
import { describeCase, markupCase, SERIAL_MUTATIONS } from '../../support/fuzz/markup.js';
import { fuzzScale, fuzzSeed } from '../../support/fuzz/prng.js';
import { restCases } from '../../support/fuzz/rest.js';
import { sipFuzzCases } from '../../support/fuzz/sip.js';
import { API, basic, type Credentials, startTestServer } from '../../support/server.js';
import { SipPeer, sipRequest, statusOf, tcpExchange } from '../../support/sip-peer.js';
import { runSipp } from '../../support/sipp.js';
import { until, markup as xml } from '../../support/until.js';
import { startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';

const SCALE = fuzzScale();
const SEED = fuzzSeed(SCALE > 1 ? Date.now() % 1_000_000 : 1);
const ADMIN = { email: 'serving-admin@example.test', password: 'admin-password-1' };
const BUSY = '+15550910001';
const MARKUP = '+15550910002';
const LIVE = ['queued', 'ringing', 'in-progress'];

let ns: TestNamespace;
let server: ServerProcess;
let inspectPort: number;
let hooks: WebhookServer;
let peer: SipPeer;
let routes: readonly RouteEntry[];
let owner: { sid: string; creds: Credentials };
let foreignSids: Record<string, string>;

async function api(method: string, path: string, creds: Credentials, form?: Record<string, string>) {
  const res = await fetch(server.base + path, {
    method,
    headers: {
      authorization: basic(creds),
      ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
    },
    ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  return { status: res.status, text, json: text.startsWith('{') ? JSON.parse(text) : null };
}

const adminCreds = (): Credentials => ({ user: server.admin.sid, secret: server.admin.auth_token });

async function account(email: string): Promise<{ sid: string; creds: Credentials }> {
  const r = await api('POST', `${API}/Accounts.json`, adminCreds(), {
    EmailAddress: email,
    Password: 'password-123',
    Role: 'Administrator',
  });
  expect(r.status, r.text).toBe(201);
  return { sid: r.json.sid, creds: { user: r.json.sid, secret: r.json.auth_token } };
}

const mb = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);
const openFiles = (): number => readdirSync(`/proc/${server.child.pid}/fd`).length;

beforeAll(async () => {
  // The route table is what the REST fuzzer walks; an in-process node lends it and goes away.
  const lender = await startTestServer({ label: 'servingroutes', env: { SIP_ENABLED: 'false' } });
  routes = [...lender.server.app.routes.entries];
  await lender.dispose();

  ns = await createNamespace('serving');
  inspectPort = await freePort('127.0.0.1');
  server = await startServerProcess(ns, {
    entry: 'src',
    admin: ADMIN,
    nodeArgs: [`--inspect=127.0.0.1:${inspectPort}`],
  });
  hooks = await startWebhookServer();
  hooks.script('/busy', xml('<Reject reason="busy"/>'));
  peer = await SipPeer.open('127.0.0.2');
  peer.autoAck = true;

  owner = await account('serving-owner@example.test');
  for (const [number, path] of [
    [BUSY, '/busy'],
    [MARKUP, '/markup'],
  ] as const) {
    const n = await api('POST', `${API}/Accounts/${owner.sid}/IncomingPhoneNumbers.json`, owner.creds, {
      PhoneNumber: number,
      VoiceUrl: `${hooks.origin}${path}`,
    });
    expect(n.status, n.text).toBe(201);
  }
  const foreign = await account('serving-foreign@example.test');
  const app = await api('POST', `${API}/Accounts/${foreign.sid}/Applications.json`, foreign.creds, {
    FriendlyName: 'serving foreign app',
  });
  foreignSids = { accountSid: foreign.sid, applicationSid: app.json.sid };
}, 120_000);

afterAll(async () => {
  peer?.close();
  await hooks?.close();
  if (server?.child.pid && server.child.exitCode === null) {
    const exited = new Promise((r) => server.child.once('exit', r));
    process.kill(server.child.pid, 'SIGTERM');
    await exited;
  }
  await ns?.dispose();
});

/** Malformed SIP over UDP and TCP; answers are the SIP fuzz suite's business, here only load. */
async function sipStorm(seed: number, count: number): Promise<void> {
  const port = server.sipPort as number;
  const target = { port, number: BUSY };
  for (const c of sipFuzzCases(seed, count, { ...target, via: 'UDP 127.0.0.2:5999' })) {
    peer.send(c.bytes, port);
    await new Promise((r) => setTimeout(r, 5));
  }
  for (const c of sipFuzzCases(seed + 1, Math.ceil(count / 4), { ...target, via: 'TCP 127.0.0.2:5999' }))
    await tcpExchange(c.bytes, port, 50);
}

/** Hostile REST requests: never a 5xx, never an unanswered request. */
async function restStorm(seed: number, perRoute: number): Promise<string[]> {
  const bad: string[] = [];
  const cases = restCases(routes, { ownAccountSid: owner.sid, foreignSids }, { seed, perRoute });
  for (const c of cases) {
    try {
      const res = await fetch(server.base + c.path, {
        method: c.method,
        headers: { authorization: basic(owner.creds), ...c.headers },
        ...(c.body === undefined ? {} : { body: c.body }),
        signal: AbortSignal.timeout(15_000),
      });
      await res.arrayBuffer();
      if (res.status >= 500) bad.push(`${res.status} ${c.label}`);
    } catch (e) {
      bad.push(`${(e as Error).message} ${c.label}`);
    }
  }
  return bad;
}

/** Real calls whose markup is mutated: each must end (no call left live is checked after). */
async function markupStorm(seed: number, calls: number): Promise<string[]> {
  const errors: string[] = [];
  const remote = `127.0.0.1:${server.sipPort}`;
  for (let i = 0; i < calls; i++) {
    const c = markupCase(seed, i, i % 2 === 1 ? { exclude: SERIAL_MUTATIONS } : {});
    hooks.script('/markup', { status: 200, headers: { 'Content-Type': c.contentType }, body: c.body });
    const r = await runSipp({ scenario: 'uac-call-expect-any-end.xml', remote, service: MARKUP });
    if (r.errors !== '') errors.push(`${describeCase(c)}: ${r.errors.slice(0, 200)}`);
  }
  return errors;
}

async function storm(seed: number, scale: number) {
  const [, rest, markup] = await Promise.all([
    sipStorm(seed, 60 * scale),
    restStorm(seed, scale),
    markupStorm(seed, 3 * scale),
  ]);
  return { rest, markup };
}

async function liveCalls(): Promise<number> {
  let total = 0;
  for (const status of LIVE) {
    const r = await api('GET', `${API}/Accounts/${owner.sid}/Calls.json?Status=${status}`, owner.creds);
    total += r.json.total as number;
  }
  return total;
}

async function options(transport: 'UDP' | 'TCP'): Promise<number> {
  const port = server.sipPort as number;
  const { text, branch } = sipRequest(port, {
    method: 'OPTIONS',
    via: `SIP/2.0/${transport} 127.0.0.2:5999`,
  });
  if (transport === 'TCP') return statusOf(await tcpExchange(Buffer.from(text, 'latin1'), port, 5_000));
  peer.send(text, port);
  return statusOf((await peer.final(branch)) ?? '');
}

describe(`one node under every fuzzer (seed ${SEED}, scale ${SCALE})`, () => {
  it('keeps serving, leaves nothing live, and returns to its baseline of files and memory', async () => {
    // Warm-up: pools, caches and lazily built parts exist before the baseline is read.
    await storm(SEED + 1_000, 1);
    await until(liveCalls, (n) => n === 0, 60_000);
    const baseFiles = await until(
      async () => openFiles(),
      () => true,
    );
    const baseMemory = await collectedMemory(inspectPort);

    let watching = true;
    const watcherFailures: string[] = [];
    let watched = 0;
    const watcher = (async () => {
      while (watching) {
        try {
          const r = await api('GET', `${API}/Accounts/${server.admin.sid}.json`, adminCreds());
          if (r.status !== 200) watcherFailures.push(`GET account ${r.status}`);
        } catch (e) {
          watcherFailures.push(`GET account ${(e as Error).message}`);
        }
        const o = await options('UDP');
        if (o !== 200) watcherFailures.push(`OPTIONS ${o}`);
        watched++;
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const result = await storm(SEED, SCALE);
    watching = false;
    await watcher;

    expect(result.rest, `seed ${SEED}: REST answers`).toEqual([]);
    expect(result.markup, `seed ${SEED}: mutated-markup calls`).toEqual([]);
    expect(watcherFailures, `seed ${SEED}: the watcher`).toEqual([]);
    expect(watched).toBeGreaterThan(0);
    expect(await options('UDP')).toBe(200);
    expect(await options('TCP')).toBe(200);
    expect(await until(liveCalls, (n) => n === 0, 60_000)).toBe(0);

    // Connections the storm opened close (idle TCP flows, webhook sockets); transactions end.
    const files = await until(
      async () => openFiles(),
      (n) => n <= baseFiles + 2,
      90_000,
    );
    expect(files, `open files, baseline ${baseFiles}`).toBeLessThanOrEqual(baseFiles + 2);
    const memory = await until(
      () => collectedMemory(inspectPort),
      (m) => m.heapUsed <= baseMemory.heapUsed + 16 * 2 ** 20,
      90_000,
    );
    expect(memory.heapUsed, `heap after GC, baseline ${baseMemory.heapUsed}`).toBeLessThanOrEqual(
      baseMemory.heapUsed + 16 * 2 ** 20,
    );
    console.info(
      `serving under fuzz: ${watched} watcher rounds; open files ${baseFiles} → ${files}; ` +
        `heap ${mb(baseMemory.heapUsed)} → ${mb(memory.heapUsed)} MB; RSS ${mb(baseMemory.rss)} → ${mb(memory.rss)} MB`,
    );
    expect(memory.rss, `RSS after GC, baseline ${baseMemory.rss}`).toBeLessThanOrEqual(
      baseMemory.rss + 64 * 2 ** 20,
    );
  }, 420_000);
});
