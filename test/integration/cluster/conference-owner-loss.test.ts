/**
 * A conference room's owner going away (docs/cluster.md, "Conferences across nodes"), with node B
 * in this process and the owners in processes of their own, on one Postgres and Redis:
 * - a call's own Mute (POST /Calls/{sid}) on a caller of B seated in A's room shows on its
 *   participant and in the response, as for a local one;
 * - A killed (kill -9) while its room holds only A's own callers: a survivor (B or C, another
 *   process) completes the record (`node-stopped`) and sends the `conference-end` callback, once;
 * - an owner draining (SIGTERM) keeps its room while its own call lives (a caller of B stays in
 *   it); once that call ends the node stops, the room ends (`node-stopped`, its `conference-end`
 *   sent once) and B's caller's `<Dial>` goes on to its action.
 */
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisKeys } from '../../../src/store/redis/keys.js';
import { RedisSnapshotStore } from '../../../src/store/redis/snapshot-store.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, API, startTestServer, type TestServer } from '../../support/server.js';
import { type ServerProcess, startServerProcess } from '../../support/server-process.js';
import { type SippProcess, startSipp } from '../../support/sipp.js';
import { until, markup as xml } from '../../support/until.js';
import { startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';

/** The claims' lease: a killed node's room and calls are taken over this long after it dies. */
const LEASE_SECONDS = '3';

let b: TestServer;
let hooks: WebhookServer;
const owners: ServerProcess[] = [];

beforeAll(async () => {
  b = await startTestServer({ label: 'confloss', env: { CALL_LEASE_SECONDS: LEASE_SECONDS } });
  hooks = await startWebhookServer();
  hooks.script('/status', { status: 204 });
  hooks.script('/confcb', { status: 204 });
}, 60_000);
afterAll(async () => {
  for (const o of owners)
    if (o.child.exitCode === null && o.child.signalCode === null) o.child.kill('SIGKILL');
  await hooks?.close();
  await b?.dispose();
});

/** Another node in its own process (its start-up alone may take a minute on a loaded machine). */
async function node(env: Record<string, string> = {}): Promise<ServerProcess> {
  const n = await startServerProcess(b.ns, {
    entry: 'src',
    admin: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
    host: '127.0.0.1',
    env: { CALL_LEASE_SECONDS: LEASE_SECONDS, ...env },
  });
  owners.push(n);
  return n;
}

interface Participant {
  call_sid: string;
  conference_sid: string;
  muted: boolean;
  status: string;
}

/** A room of its own: a new number whose markup dials it, and REST reads through node B. */
async function room(label: string, statusCallbackEvent: string) {
  const name = `${label}-${Date.now()}`;
  const number = `+1555044${String(Date.now() % 10_000).padStart(4, '0')}`;
  hooks.script(`/after-${name}`, xml('<Hangup/>'));
  hooks.script(
    `/room-${name}`,
    xml(
      `<Dial action="${hooks.origin}/after-${name}"><Conference beep="false" statusCallback="${hooks.origin}/confcb" statusCallbackEvent="${statusCallbackEvent}">${name}</Conference></Dial>`,
    ),
  );
  const account = b.admin.sid;
  const created = await b.request('POST', `${API}/Accounts/${account}/IncomingPhoneNumbers.json`, {
    form: {
      PhoneNumber: number,
      VoiceUrl: `${hooks.origin}/room-${name}`,
      StatusCallback: `${hooks.origin}/status`,
    },
  });
  expect(created.status).toBe(201);
  const base = `${API}/Accounts/${account}/Conferences`;
  const conference = async () =>
    (
      (await b.request('GET', `${base}.json?FriendlyName=${name}`)).json.conferences as Array<
        Record<string, unknown>
      >
    )[0];
  return {
    name,
    number,
    base,
    conference,
    participants: async (): Promise<Participant[]> => {
      const c = await conference();
      return c
        ? ((await b.request('GET', `${base}/${c.sid}/Participants.json`)).json.calls as Participant[])
        : [];
    },
    /** The `<Dial>` actions requested for the room's calls (their CallSid). */
    actions: () =>
      hooks.requestsTo(`/after-${name}`).map((r) => new URLSearchParams(r.rawBody.toString()).get('CallSid')),
  };
}

/** Calls `number` on `sipPort`; the caller waits for the service's BYE. */
function dial(sipPort: number, number: string, localIp: string): Promise<SippProcess> {
  return startSipp({
    scenario: 'uac-call-expect-bye.xml',
    remote: `127.0.0.1:${sipPort}`,
    service: number,
    localIp,
    // A bound for a BYE that never comes, within the test's own (a loaded machine slows each step).
    timeoutSeconds: 150,
  });
}

/**
 * A caller on `firstPort` seated in the room, then one on `secondPort` (each pushed to `callers`
 * as it starts, for the test's clean-up): the room's listing once both are connected.
 */
async function seatTwo(
  r: Awaited<ReturnType<typeof room>>,
  firstPort: number,
  secondPort: number,
  callers: SippProcess[],
): Promise<Participant[]> {
  callers.push(await dial(firstPort, r.number, '127.0.0.2'));
  await until(r.participants, (l) => l.length === 1, 15_000);
  callers.push(await dial(secondPort, r.number, '127.0.0.3'));
  return until(r.participants, (l) => l.length === 2 && l.every((p) => p.status === 'connected'), 15_000);
}

/** The caller's sipp ended its scenario (its error log, else its stderr, says why not). */
async function endsCleanly(caller: SippProcess): Promise<void> {
  const r = await caller.done;
  expect(r.code, r.errors || r.stderr).toBe(0);
}

/** The conference status callbacks of conference `sid`, by event name. */
function callbacksOf(sid: string) {
  return hooks
    .requestsTo('/confcb')
    .map((r) => new URLSearchParams(r.rawBody.toString()))
    .filter((e) => e.get('ConferenceSid') === sid);
}
const ends = (sid: string) =>
  callbacksOf(sid).filter((e) => e.get('StatusCallbackEvent') === 'conference-end');

/** The end callback came once, numbered after every other callback of the conference. */
async function endedOnce(sid: string): Promise<void> {
  await until(
    () => ends(sid),
    (l) => l.length >= 1,
    20_000,
  );
  // A second survivor (or the owner) would send its own within a sweep: give it that long.
  await new Promise((r) => setTimeout(r, 2000));
  const [end, ...more] = ends(sid);
  expect(more).toHaveLength(0);
  expect(end?.get('ReasonConferenceEnded')).toBe('node-stopped');
  const seq = callbacksOf(sid).map((e) => Number(e.get('SequenceNumber')));
  expect(Number(end?.get('SequenceNumber'))).toBe(Math.max(...seq));
  expect(new Set(seq).size).toBe(seq.length);
}

describe('a conference whose owner goes away', () => {
  it("a call's own Mute on a caller of another node shows on its participant", async () => {
    const a = await node();
    const r = await room('mute', 'start end mute');
    const callers: SippProcess[] = [];
    try {
      const listed = await seatTwo(r, a.sipPort!, b.server.sip!.stack.port, callers);
      const cf = listed[0]!.conference_sid;
      const onB = listed[1]!.call_sid;
      const muted = await b.request('POST', `${API}/Accounts/${b.admin.sid}/Calls/${onB}.json`, {
        form: { Mute: 'true' },
      });
      expect(muted.status).toBe(200);
      expect(muted.json).toMatchObject({ sid: onB, conference_sid: cf, muted: true });
      const shown = await until(
        async () => (await b.request('GET', `${r.base}/${cf}/Participants/${onB}.json`)).json as Participant,
        (p) => p.muted === true,
      );
      expect(shown).toMatchObject({ call_sid: onB, muted: true });
      const mutes = await until(
        () => callbacksOf(cf).filter((e) => e.get('StatusCallbackEvent') === 'participant-mute'),
        (l) => l.length >= 1,
      );
      expect(mutes.map((e) => e.get('CallSid'))).toEqual([onB]);
      expect(
        (await b.request('POST', `${r.base}/${cf}.json`, { form: { Status: 'completed' } })).status,
      ).toBe(200);
      for (const c of callers) await endsCleanly(c);
    } finally {
      for (const c of callers) c.kill();
      a.child.kill('SIGKILL');
    }
  }, 180_000);

  it('owner killed with only its own callers in the room: a survivor ends it, once', async () => {
    const [a, c] = await Promise.all([node(), node()]);
    const r = await room('alone', 'start end');
    const callers: SippProcess[] = [];
    try {
      const listed = await seatTwo(r, a.sipPort!, a.sipPort!, callers);
      const cf = listed[0]!.conference_sid;
      expect((await r.conference())?.status).toBe('RUNNING_MODERATOR_PRESENT');
      await until(
        () => callbacksOf(cf),
        (l) => l.some((e) => e.get('StatusCallbackEvent') === 'conference-start'),
      );
      // A node that dies before an answered call's snapshot is written (a short batching window)
      // leaves nothing to send its BYE with: the kill comes once both are stored.
      const snapshots = new RedisSnapshotStore(b.server.redis, redisKeys(b.ns.redisPrefix));
      await until(
        () => Promise.all(listed.map((p) => snapshots.load('call', p.call_sid))),
        (l) => l.every((x) => x !== null),
      );

      a.child.kill('SIGKILL');
      // Nobody of B or C was in the room: a sweep of the run-out locations completes it.
      const done = await until(
        async () => (await b.request('GET', `${r.base}/${cf}.json`)).json,
        (x) => x.status === 'COMPLETED',
        20_000,
      );
      expect(done).toMatchObject({ status: 'COMPLETED', reason_conference_ended: 'node-stopped' });
      await endedOnce(cf);
      // A's callers are ended by call recovery, as any call of a dead node.
      for (const x of callers) await endsCleanly(x);
    } finally {
      for (const x of callers) x.kill();
      c.child.kill('SIGKILL');
    }
  }, 180_000);

  it('owner draining: the room runs while its call lives, then ends; the other node’s Dial goes on', async () => {
    // The drain ends on the owner's last call; the timeout is only a bound.
    const a = await node({ DRAIN_TIMEOUT: '20' });
    const r = await room('drain', 'start end leave');
    const callers: SippProcess[] = [];
    try {
      const listed = await seatTwo(r, a.sipPort!, b.server.sip!.stack.port, callers);
      const cf = listed[0]!.conference_sid;
      const [onA, onB] = listed.map((p) => p.call_sid);

      const exited = once(a.child, 'exit');
      a.child.kill('SIGTERM');
      const draining = await until(
        async () => (await fetch(`${a.base}/ready`)).status,
        (s) => s === 503,
        15_000,
      );
      expect(draining).toBe(503);
      // Still running, both callers in it, while A's own call lives.
      expect((await r.conference())?.status).toBe('RUNNING_MODERATOR_PRESENT');
      expect((await r.participants()).map((p) => p.call_sid).sort()).toEqual([onA, onB].sort());

      // A's call ends: A stops, its room ends, B's caller goes on to its action.
      const auth = `Basic ${Buffer.from(`${b.admin.sid}:${b.admin.secret}`).toString('base64')}`;
      const hangUp = await fetch(`${a.base}${API}/Accounts/${b.admin.sid}/Calls/${onA}.json`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ Status: 'completed' }).toString(),
      });
      expect(hangUp.status).toBe(200);
      await endsCleanly(callers[0]!);
      const [code] = await exited;
      expect(code).toBe(0);
      const done = await until(
        async () => (await b.request('GET', `${r.base}/${cf}.json`)).json,
        (x) => x.status === 'COMPLETED',
        15_000,
      );
      expect(done).toMatchObject({ status: 'COMPLETED', reason_conference_ended: 'node-stopped' });
      await endsCleanly(callers[1]!);
      expect(r.actions()).toContain(onB);
      await endedOnce(cf);
      // The owner ended it itself: B's caller was sent out of the room before its end.
      const events = callbacksOf(cf).map((e) => [e.get('StatusCallbackEvent'), e.get('CallSid')]);
      expect(events.slice(-2)).toEqual([
        ['participant-leave', onB],
        ['conference-end', null],
      ]);
    } finally {
      for (const x of callers) x.kill();
    }
  }, 180_000);
});
