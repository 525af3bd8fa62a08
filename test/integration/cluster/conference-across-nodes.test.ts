/**
 * One conference across two nodes on one Postgres and Redis (docs/cluster.md, "Conferences across
 * nodes"): node A runs in its own process (so it can be killed), node B in this one. Three sipp
 * callers dial the same `<Dial><Conference>` room, two through A (the first claims the room: A owns
 * it) and one through B (it joins A's room over an RTP link). Their audio is carried by the test's
 * RTP peers, each sending its own tone: each peer hears the two others and not itself. REST on B
 * lists the one conference and its three participants and mutes a caller of A. Then A is killed:
 * the caller on B gets its `<Dial>` ended (the markup goes on to the action), A's callers are ended
 * by B's recovery, B completes the conference record once A's claim on the room has run out, a
 * caller dialling the room meanwhile waits that out and starts a new conference on B, and every
 * call ends with exactly one terminal status. The first test: a waiting participant on B hears the
 * wait music from A, a moderator on B starts and (leaving) ends A's room, a kick on A reaches B.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import wavefile from 'wavefile';
import { tone } from '../../../src/media/engine/pcm.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, API, startTestServer, type TestServer } from '../../support/server.js';
import { type ServerProcess, startServerProcess } from '../../support/server-process.js';
import { freePort, type SippProcess, startSipp } from '../../support/sipp.js';
import { until, markup as xml } from '../../support/until.js';
import { startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';
import { answerWithTone, heardNext, hears, RtpPeer } from '../media/helpers.js';

/** The claims' lease: A's room and calls are taken over this long after it dies. */
const LEASE_SECONDS = '3';

let b: TestServer;
let a: ServerProcess;
let hooks: WebhookServer;

beforeAll(async () => {
  b = await startTestServer({ label: 'confx', env: { CALL_LEASE_SECONDS: LEASE_SECONDS } });
  a = await startServerProcess(b.ns, {
    entry: 'src',
    admin: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
    host: '127.0.0.1',
    env: { CALL_LEASE_SECONDS: LEASE_SECONDS },
  });
  hooks = await startWebhookServer();
  hooks.script('/after', xml('<Hangup/>'));
  hooks.script('/status', { status: 204 });
  hooks.script('/confcb', { status: 204 });
  // A child server's start-up takes many times its few seconds of CPU on a loaded machine.
}, 150_000);
afterAll(async () => {
  if (a && a.child.exitCode === null && a.child.signalCode === null) a.child.kill('SIGKILL');
  await hooks?.close();
  await b?.dispose();
});

/** `ms` of a `freq` tone as an 8 kHz 16-bit mono WAV (wait music). */
function wavTone(freq: number, ms: number): Buffer {
  const wav = new wavefile.WaveFile();
  wav.fromScratch(1, 8000, '16', tone(freq, ms));
  return Buffer.from(wav.toBuffer());
}

const WAIT_HZ = 2500;

/**
 * What each peer hears over the next 800 ms, captured again until `ok` holds: the mix takes a
 * moment to reach everyone after a join or a mute (longer on a loaded machine), and the test's
 * expectations are about what is heard once it has, checked on that one capture.
 */
const heardOnce = (peers: readonly RtpPeer[], ok: (heard: Int16Array[]) => boolean) =>
  until(() => Promise.all(peers.map((p) => heardNext(p, 800))), ok, 15_000);

/** Calls `number` from a sipp on `localIp` whose RTP the test's `peer` carries. */
async function dial(sipPort: number, number: string, localIp: string, peer: RtpPeer): Promise<SippProcess> {
  return startSipp({
    scenario: 'uac-call-rtp-to-key-expect-bye.xml',
    remote: `127.0.0.1:${sipPort}`,
    service: number,
    localIp,
    keys: { rtp_ip: peer.address, rtp_port: String(peer.port) },
    extra: ['-mi', localIp, '-mp', String(await freePort(localIp))],
    timeoutSeconds: 150,
  });
}

/** The caller's sipp ended its scenario (its error log, else its stderr, says why not). */
async function endsCleanly(caller: SippProcess): Promise<void> {
  const r = await caller.done;
  expect(r.code, r.errors || r.stderr).toBe(0);
}

interface Participant {
  call_sid: string;
  conference_sid: string;
  muted: boolean;
  status: string;
}

describe('a conference across two nodes', () => {
  it('wait music, start and end on a participant of the other node; a kick through the owner', async () => {
    const room = `moderated-${Date.now()}`;
    const suffix = String(Date.now() % 10_000).padStart(4, '0');
    const guests = `+1555042${suffix}`;
    const host = `+1555043${suffix}`;
    const conf = (attrs: string) =>
      xml(
        `<Dial action="${hooks.origin}/after-moderated"><Conference beep="false" waitUrl="${hooks.origin}/wait.wav" ${attrs}>${room}</Conference></Dial>`,
      );
    hooks.script('/wait.wav', { headers: { 'Content-Type': 'audio/wav' }, body: wavTone(WAIT_HZ, 1000) });
    hooks.script('/guest', conf('startConferenceOnEnter="false"'));
    hooks.script('/host', conf('startConferenceOnEnter="true" endConferenceOnEnter="true"'));
    hooks.script('/after-moderated', xml('<Hangup/>'));
    const account = b.admin.sid;
    for (const [number, path] of [
      [guests, '/guest'],
      [host, '/host'],
    ] as const) {
      const r = await b.request('POST', `${API}/Accounts/${account}/IncomingPhoneNumbers.json`, {
        form: { PhoneNumber: number, VoiceUrl: `${hooks.origin}${path}` },
      });
      expect(r.status).toBe(201);
    }
    const base = `${API}/Accounts/${account}/Conferences`;
    const onA = (method: string, path: string, form?: Record<string, string>) =>
      fetch(`${a.base}${path}`, {
        method,
        headers: {
          authorization: `Basic ${Buffer.from(`${account}:${b.admin.secret}`).toString('base64')}`,
          ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        ...(form ? { body: new URLSearchParams(form).toString() } : {}),
      });
    const conference = async () =>
      (
        (await b.request('GET', `${base}.json?FriendlyName=${room}`)).json.conferences as Array<
          Record<string, unknown>
        >
      )[0];
    const participants = async () => {
      const c = await conference();
      return c
        ? ((await b.request('GET', `${base}/${c.sid}/Participants.json`)).json.calls as Participant[])
        : [];
    };
    const freqs = [450, 900, 1700] as const;
    const peers = await Promise.all(['127.0.0.5', '127.0.0.6', '127.0.0.7'].map((ip) => RtpPeer.open(ip)));
    const streaming = peers.map((p, i) => answerWithTone(p, freqs[i]!));
    const callers: SippProcess[] = [];
    try {
      // A guest on A (A owns the room), a guest on B: both wait, B's hearing the wait music over the link.
      callers.push(await dial(a.sipPort!, guests, '127.0.0.2', peers[0]!));
      await until(participants, (l) => l.length === 1, 15_000);
      callers.push(await dial(b.server.sip!.stack.port, guests, '127.0.0.3', peers[1]!));
      await until(participants, (l) => l.length === 2, 15_000);
      expect((await conference())?.status).toBe('RUNNING_MODERATOR_ABSENT');
      await Promise.all(streaming.slice(0, 2));
      const [waiting] = await heardOnce(
        [peers[1]!],
        ([pcm]) => hears(pcm!, WAIT_HZ) && !hears(pcm!, freqs[0]),
      );
      expect(hears(waiting!, WAIT_HZ)).toBe(true);
      expect(hears(waiting!, freqs[0])).toBe(false);

      // The host arrives on B: the conference starts on A, everybody hears the two others.
      callers.push(await dial(b.server.sip!.stack.port, host, '127.0.0.4', peers[2]!));
      const listed = await until(
        participants,
        (l) => l.length === 3 && l.every((p) => p.status === 'connected'),
        15_000,
      );
      const callOf = listed.map((p) => p.call_sid);
      const cf = listed[0]!.conference_sid;
      expect((await conference())?.status).toBe('RUNNING_MODERATOR_PRESENT');
      await streaming[2];
      const heard = await heardOnce(peers, (h) =>
        h.every((pcm, i) => freqs.every((f, j) => hears(pcm, f) === (i !== j)) && !hears(pcm, WAIT_HZ)),
      );
      for (const [i, pcm] of heard.entries()) {
        for (const [j, f] of freqs.entries()) expect(hears(pcm, f), `peer ${i} hears ${f} Hz`).toBe(i !== j);
        expect(hears(pcm, WAIT_HZ), `peer ${i} hears no wait music`).toBe(false);
      }

      // Kick B's guest through A, the owner: its Dial goes on to the action on B.
      expect((await onA('DELETE', `${base}/${cf}/Participants/${callOf[1]}.json`)).status).toBe(204);
      await endsCleanly(callers[1]!);
      await until(participants, (l) => l.length === 2, 10_000);

      // The host's call ends (through A, forwarded to B): its endConferenceOnEnter (Restcomm's name for
      // Twilio's endConferenceOnExit) ends the room on A.
      const ended = await onA('POST', `${API}/Accounts/${account}/Calls/${callOf[2]}.json`, {
        Status: 'completed',
      });
      expect(ended.status).toBe(200);
      await endsCleanly(callers[2]!);
      await endsCleanly(callers[0]!);
      const done = await until(
        async () => (await b.request('GET', `${base}/${cf}.json`)).json,
        (c) => c.status === 'COMPLETED',
        15_000,
      );
      expect(done).toMatchObject({
        reason_conference_ended: 'participant-with-end-conference-on-exit-left',
        call_sid_ending_conference: callOf[2],
      });
      const after = hooks
        .requestsTo('/after-moderated')
        .map((r) => new URLSearchParams(r.rawBody.toString()).get('CallSid'));
      expect(after.sort()).toEqual([callOf[0], callOf[1]].sort());
    } finally {
      for (const c of callers) c.kill();
      for (const p of peers) p.close();
    }
  }, 180_000);

  it('three callers on two nodes hear each other; the owner killed, the room ends for all', async () => {
    const room = `across-${Date.now()}`;
    const number = `+1555041${String(Date.now() % 10_000).padStart(4, '0')}`;
    hooks.script(
      '/room',
      xml(
        `<Dial action="${hooks.origin}/after"><Conference beep="false" statusCallback="${hooks.origin}/confcb" statusCallbackEvent="start join">${room}</Conference></Dial>`,
      ),
    );
    const account = b.admin.sid;
    const created = await b.request('POST', `${API}/Accounts/${account}/IncomingPhoneNumbers.json`, {
      form: {
        PhoneNumber: number,
        VoiceUrl: `${hooks.origin}/room`,
        StatusCallback: `${hooks.origin}/status`,
      },
    });
    expect(created.status).toBe(201);

    const freqs = [450, 900, 1700] as const;
    // Callers 0 and 1 reach node A, caller 2 node B.
    const sipPorts = [a.sipPort!, a.sipPort!, b.server.sip!.stack.port];
    const peers = await Promise.all(['127.0.0.5', '127.0.0.6', '127.0.0.7'].map((ip) => RtpPeer.open(ip)));
    const streaming = peers.map((p, i) => answerWithTone(p, freqs[i]!));
    const callers: SippProcess[] = [];
    const base = `${API}/Accounts/${account}/Conferences`;
    const conferences = async () =>
      (await b.request('GET', `${base}.json?FriendlyName=${room}`)).json.conferences as Array<
        Record<string, unknown>
      >;
    // Read through node B: the room runs on A, so B forwards the reads.
    const participants = async () => {
      const [c] = await conferences();
      return c
        ? ((await b.request('GET', `${base}/${c.sid}/Participants.json`)).json.calls as Participant[])
        : [];
    };
    try {
      // One caller at a time, each in the room before the next: the n-th participant is peer n.
      for (const [i, p] of peers.entries()) {
        const localIp = `127.0.0.${2 + i}`;
        callers.push(
          await startSipp({
            scenario: 'uac-call-rtp-to-key-expect-bye.xml',
            remote: `127.0.0.1:${sipPorts[i]}`,
            service: number,
            localIp,
            keys: { rtp_ip: p.address, rtp_port: String(p.port) },
            extra: ['-mi', localIp, '-mp', String(await freePort(localIp))],
            timeoutSeconds: 150,
          }),
        );
        await until(participants, (l) => l.length === i + 1, 15_000);
      }

      // One conference (one sid) for the room, whichever node is asked; three participants in it.
      const [conference] = await until(
        conferences,
        (l) => l.length === 1 && l[0]?.status === 'RUNNING_MODERATOR_PRESENT',
      );
      const cf = conference!.sid as string;
      const viaA = await fetch(`${a.base}${base}/${cf}.json`, {
        headers: { authorization: `Basic ${Buffer.from(`${account}:${b.admin.secret}`).toString('base64')}` },
      });
      expect(((await viaA.json()) as { status: string }).status).toBe('RUNNING_MODERATOR_PRESENT');
      const listed = await until(
        participants,
        (l) => l.length === 3 && l.every((p) => p.status === 'connected'),
      );
      expect(listed.map((p) => p.conference_sid)).toEqual([cf, cf, cf]);
      const calls = async () =>
        (await b.request('GET', `${API}/Accounts/${account}/Calls.json?To=${encodeURIComponent(number)}`))
          .json.calls as Array<{ sid: string; status: string }>;
      expect(new Set(listed.map((p) => p.call_sid))).toEqual(new Set((await calls()).map((c) => c.sid)));
      const callOf = listed.map((p) => p.call_sid);

      // Each peer hears the two others (across the nodes) and not itself.
      await Promise.all(streaming);
      const heard = await heardOnce(peers, (h) =>
        h.every((pcm, i) => freqs.every((f, j) => hears(pcm, f) === (i !== j))),
      );
      for (const [i, pcm] of heard.entries())
        for (const [j, f] of freqs.entries()) expect(hears(pcm, f), `peer ${i} hears ${f} Hz`).toBe(i !== j);

      // Mute a caller of node A through node B: nobody hears it, in either node.
      const path0 = `${base}/${cf}/Participants/${callOf[0]}.json`;
      const muted = await b.request('POST', path0, { form: { Mute: 'true' } });
      expect(muted.status).toBe(200);
      expect(muted.json).toMatchObject({ call_sid: callOf[0], conference_sid: cf, muted: true });
      const [, at1, at2] = await heardOnce(
        peers,
        ([, h1, h2]) => !hears(h1!, freqs[0]) && !hears(h2!, freqs[0]) && hears(h2!, freqs[1]),
      );
      expect(hears(at1!, freqs[0])).toBe(false);
      expect(hears(at2!, freqs[0])).toBe(false);
      expect(hears(at2!, freqs[1])).toBe(true);

      // Node A dies. The caller on B leaves the ended room: its Dial goes on to the action.
      a.child.kill('SIGKILL');
      // A caller dialling the room meanwhile waits out A's claim, then starts a new room on B.
      const late = await RtpPeer.open('127.0.0.8');
      peers.push(late);
      const lateStreaming = answerWithTone(late, 2000);
      callers.push(await dial(b.server.sip!.stack.port, number, '127.0.0.8', late));
      await endsCleanly(callers[2]!);
      const after = await until(
        () =>
          hooks
            .requestsTo('/after')
            .map((r) => new URLSearchParams(r.rawBody.toString()))
            .filter((f) => f.get('CallSid') === callOf[2]),
        (l) => l.length >= 1,
        20_000,
      );
      expect(after).toHaveLength(1);
      expect(after[0]!.get('DialCallStatus')).toBe('completed');
      // A's callers are ended by B once their claims run out.
      for (const c of callers.slice(0, 2)) await endsCleanly(c);

      // The conference record is completed by the survivor, once.
      const done = await until(
        async () => (await b.request('GET', `${base}/${cf}.json`)).json,
        (c) => c.status === 'COMPLETED',
        20_000,
      );
      expect(done).toMatchObject({ reason_conference_ended: 'node-stopped' });
      // The late caller is alone in a new conference of the same name, on B.
      const again = await until(conferences, (l) => l.length === 2, 20_000);
      const fresh = again.find((c) => c.sid !== cf)!;
      expect(fresh.status).toBe('RUNNING_MODERATOR_PRESENT');
      const [alone] = await until(
        async () =>
          (await b.request('GET', `${base}/${fresh.sid}/Participants.json`)).json.calls as Participant[],
        (l) => l.length === 1,
      );
      await lateStreaming;
      expect(
        (await b.request('POST', `${base}/${fresh.sid}.json`, { form: { Status: 'completed' } })).status,
      ).toBe(200);
      await endsCleanly(callers[3]!);

      // Every call: one terminal status, in its record and in its callbacks.
      const everyCall = [...callOf, alone!.call_sid].sort();
      await until(calls, (l) => l.length === 4 && l.every((c) => c.status === 'completed'), 30_000);
      const terminal = () =>
        hooks
          .requestsTo('/status')
          .map((r) => new URLSearchParams(r.rawBody.toString()))
          .filter((f) =>
            ['completed', 'failed', 'busy', 'no-answer', 'canceled'].includes(f.get('CallStatus') ?? ''),
          )
          .map((f) => f.get('CallSid'));
      await until(terminal, (l) => new Set(l).size === 4, 30_000);
      await new Promise((r) => setTimeout(r, 1000));
      expect(terminal().sort()).toEqual(everyCall);

      // The first room's status callbacks came from its owner alone: one start, three joins, one sequence.
      const events = hooks
        .requestsTo('/confcb')
        .map((r) => new URLSearchParams(r.rawBody.toString()))
        .filter((e) => e.get('ConferenceSid') === cf);
      const names = events.map((e) => e.get('StatusCallbackEvent'));
      expect(names.filter((n) => n === 'conference-start')).toHaveLength(1);
      expect(names.filter((n) => n === 'participant-join')).toHaveLength(3);
      const seq = events.map((e) => Number(e.get('SequenceNumber')));
      expect(new Set(seq).size).toBe(seq.length);
    } finally {
      for (const c of callers) c.kill();
      for (const p of peers) p.close();
    }
  }, 180_000);
});
