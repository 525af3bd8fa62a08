/**
 * Conferences and Participants over REST with real callers: three sipp calls whose audio is carried
 * by the test's own RTP peers (each sends its own tone, so what a peer hears can be taken apart by
 * frequency) meet in a `<Dial><Conference>`. They are listed as participants; muting one takes its
 * tone out of what the others hear; kicking one sends its call on to the Dial action (which hangs
 * up); holding one plays it the hold music instead of the room; an announcement reaches everyone;
 * ending the room releases the rest; the status callbacks arrive signed and in order. Lists
 * filter by Status, FriendlyName and DateCreated; another account's conference is not found.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import wavefile from 'wavefile';
import { tone } from '../../../src/media/engine/pcm.js';
import { API, type Credentials, startTestServer, type TestServer } from '../../support/server.js';
import { freePort, type SippProcess, startSipp } from '../../support/sipp.js';
import { until, markup as xml } from '../../support/until.js';
import { startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';
import { answerWithTone, heardNext, hears, RtpPeer } from '../media/helpers.js';

let ts: TestServer;
let hooks: WebhookServer;
let owner: { sid: string; creds: Credentials };
let stranger: { sid: string; creds: Credentials };

async function account(email: string) {
  const r = await ts.request('POST', `${API}/Accounts.json`, {
    auth: ts.admin,
    form: { EmailAddress: email, Password: 'password-123', Role: 'Developer' },
  });
  return {
    sid: r.json.sid as string,
    creds: { user: r.json.sid as string, secret: r.json.auth_token as string },
  };
}

/** `ms` of a `freq` tone as an 8 kHz 16-bit mono WAV (hold music, announcements). */
function wavTone(freq: number, ms: number): Buffer {
  const wav = new wavefile.WaveFile();
  wav.fromScratch(1, 8000, '16', tone(freq, ms));
  return Buffer.from(wav.toBuffer());
}

const HOLD_HZ = 2500;
const ANNOUNCE_HZ = 2100;

beforeAll(async () => {
  ts = await startTestServer({ label: 'conferences' });
  hooks = await startWebhookServer();
  hooks.script('/confcb', { status: 204 });
  hooks.script('/after', xml('<Hangup/>'));
  hooks.script('/hold.wav', { headers: { 'Content-Type': 'audio/wav' }, body: wavTone(HOLD_HZ, 1000) });
  hooks.script('/announce.wav', {
    headers: { 'Content-Type': 'audio/wav' },
    body: wavTone(ANNOUNCE_HZ, 3000),
  });
  owner = await account('conf-owner@example.test');
  stranger = await account('conf-stranger@example.test');
});
afterAll(async () => {
  await hooks?.close();
  await ts?.dispose();
});

const get = (path: string, creds = owner.creds) => ts.request('GET', path, { auth: creds });
const post = (path: string, form: Record<string, string>, creds = owner.creds) =>
  ts.request('POST', path, { auth: creds, form });

interface Participant {
  sid: string;
  call_sid: string;
  conference_sid: string;
  muted: boolean;
  hold: boolean;
  status: string;
}

describe('conferences over REST', () => {
  it('three callers are participants; mute, kick and end the room; callbacks, filters, isolation', async () => {
    const room = `standup-${Date.now()}`;
    const number = `+1555040${String(Date.now() % 10_000).padStart(4, '0')}`;
    hooks.script(
      '/room',
      xml(
        `<Dial action="${hooks.origin}/after"><Conference beep="false" statusCallback="${hooks.origin}/confcb" statusCallbackEvent="start end join leave mute hold">${room}</Conference></Dial>`,
      ),
    );
    const created = await post(`${API}/Accounts/${owner.sid}/IncomingPhoneNumbers.json`, {
      PhoneNumber: number,
      VoiceUrl: `${hooks.origin}/room`,
    });
    expect(created.status).toBe(201);

    const freqs = [450, 900, 1700] as const;
    const peers = await Promise.all(['127.0.0.5', '127.0.0.6', '127.0.0.7'].map((ip) => RtpPeer.open(ip)));
    const streaming = peers.map((p, i) => answerWithTone(p, freqs[i]!));
    const callers: SippProcess[] = [];
    const base = `${API}/Accounts/${owner.sid}/Conferences`;
    try {
      // One caller at a time, each in the room before the next: the n-th participant is peer n.
      const inRoom = async () => {
        const l = (await get(`${base}.json?FriendlyName=${room}`)).json.conferences as Array<{ sid: string }>;
        return l[0] ? ((await get(`${base}/${l[0].sid}/Participants.json`)).json.calls as Participant[]) : [];
      };
      for (const [i, p] of peers.entries()) {
        const localIp = `127.0.0.${2 + i}`;
        callers.push(
          await startSipp({
            scenario: 'uac-call-rtp-to-key-expect-bye.xml',
            remote: `127.0.0.1:${ts.server.sip!.stack.port}`,
            service: number,
            localIp,
            keys: { rtp_ip: p.address, rtp_port: String(p.port) },
            extra: ['-mi', localIp, '-mp', String(await freePort(localIp))],
            timeoutSeconds: 60,
          }),
        );
        await until(inRoom, (l) => l.length === i + 1);
      }

      // Listed: one running conference of that name, with the three calls as participants.
      const [conference] = await until(
        async () =>
          (await get(`${base}.json?FriendlyName=${room}`)).json.conferences as Array<Record<string, unknown>>,
        (l) => l.length === 1 && l[0]?.status === 'RUNNING_MODERATOR_PRESENT',
      );
      const cf = conference!.sid as string;
      expect(cf).toMatch(/^CF[0-9a-f]{32}$/);
      expect(conference).toMatchObject({
        account_sid: owner.sid,
        friendly_name: room,
        api_version: '2012-04-24',
        uri: `${base}/${cf}.json`,
        subresource_uris: { participants: `${base}/${cf}/Participants.json` },
        reason_conference_ended: null,
      });
      const participants = await until(
        async () => (await get(`${base}/${cf}/Participants.json`)).json.calls as Participant[],
        (l) => l.length === 3 && l.every((p) => p.status === 'connected'),
      );
      expect(participants.map((p) => p.conference_sid)).toEqual([cf, cf, cf]);
      expect(participants.every((p) => !p.muted && !p.hold)).toBe(true);
      const calls = (await get(`${API}/Accounts/${owner.sid}/Calls.json?To=${encodeURIComponent(number)}`))
        .json.calls as Array<{ sid: string; status: string }>;
      expect(new Set(participants.map((p) => p.call_sid))).toEqual(new Set(calls.map((c) => c.sid)));
      // The XML form (the default) names the same conference.
      const asXml = await get(`${base}/${cf}`);
      expect(asXml.text).toContain(`<Sid>${cf}</Sid>`);
      expect(asXml.text).toContain('<Status>RUNNING_MODERATOR_PRESENT</Status>');

      const order = (await get(`${base}/${cf}/Participants.json`)).json.calls as Participant[];
      const callOf = order.map((p) => p.call_sid);
      await Promise.all(streaming);
      await new Promise((r) => setTimeout(r, 300));
      for (const [i, p] of peers.entries()) {
        const heard = await heardNext(p, 800);
        for (const [j, f] of freqs.entries())
          expect(hears(heard, f), `peer ${i} hears ${f} Hz`).toBe(i !== j);
      }

      // Mute the first caller: nobody hears it any more; it still hears the others.
      const muted = await post(`${base}/${cf}/Participants/${callOf[0]}.json`, { Mute: 'true' });
      expect(muted.status).toBe(200);
      expect(muted.json).toMatchObject({ call_sid: callOf[0], conference_sid: cf, muted: true, hold: false });
      await new Promise((r) => setTimeout(r, 200));
      const [at0, at1, at2] = await Promise.all(peers.map((p) => heardNext(p, 800)));
      expect(hears(at1!, freqs[0])).toBe(false);
      expect(hears(at2!, freqs[0])).toBe(false);
      expect(hears(at1!, freqs[2])).toBe(true);
      expect(hears(at0!, freqs[1]) && hears(at0!, freqs[2])).toBe(true);
      // A request without Mute leaves it muted (Restcomm would unmute); the call shows it too.
      const unchanged = await post(`${base}/${cf}/Participants/${callOf[0]}.json`, { Hold: 'false' });
      expect(unchanged.json.muted).toBe(true);
      expect((await get(`${base}/${cf}/Participants.json?Muted=true`)).json.calls).toHaveLength(1);

      // Hold the second: it hears the hold music instead of the room, and nobody hears it; then back.
      const held = await post(`${base}/${cf}/Participants/${callOf[1]}.json`, {
        Hold: 'true',
        HoldUrl: `${hooks.origin}/hold.wav`,
      });
      expect(held.json).toMatchObject({ hold: true, muted: false });
      await new Promise((r) => setTimeout(r, 300));
      const [heldAt1, heldAt2] = await Promise.all([heardNext(peers[1]!, 800), heardNext(peers[2]!, 800)]);
      expect(hears(heldAt1!, HOLD_HZ)).toBe(true);
      expect(hears(heldAt1!, freqs[2])).toBe(false);
      expect(hears(heldAt2!, freqs[1])).toBe(false);
      const back = await post(`${base}/${cf}/Participants/${callOf[1]}.json`, { Hold: 'false' });
      expect(back.json).toMatchObject({ hold: false, muted: false });
      await new Promise((r) => setTimeout(r, 200));
      const [backAt1, backAt2] = await Promise.all([heardNext(peers[1]!, 800), heardNext(peers[2]!, 800)]);
      expect(hears(backAt1!, freqs[2]) && !hears(backAt1!, HOLD_HZ)).toBe(true);
      expect(hears(backAt2!, freqs[1])).toBe(true);

      // An announcement to the conference reaches every participant.
      const announced = await post(`${base}/${cf}.json`, { AnnounceUrl: `${hooks.origin}/announce.wav` });
      expect(announced.status).toBe(200);
      await until(
        () => hooks.requestsTo('/announce.wav'),
        (l) => l.length >= 1,
      );
      await new Promise((r) => setTimeout(r, 300));
      const announcedAt = await Promise.all(peers.map((p) => heardNext(p, 600)));
      for (const [i, heard] of announcedAt.entries())
        expect(hears(heard, ANNOUNCE_HZ), `peer ${i} hears the announcement`).toBe(true);
      await new Promise((r) => setTimeout(r, 2500));

      // Mute on the call itself (POST /Calls) shows on its participant, with the same conference sid.
      const callMute = await post(`${API}/Accounts/${owner.sid}/Calls/${callOf[1]}.json`, { Mute: 'true' });
      expect(callMute.json).toMatchObject({ conference_sid: cf, muted: true, hold: false });
      expect((await get(`${base}/${cf}/Participants/${callOf[1]}.json`)).json.muted).toBe(true);

      // Kick the third: its Dial goes on to the action (which hangs up); two participants remain.
      const kicked = await ts.request('DELETE', `${base}/${cf}/Participants/${callOf[2]}.json`, {
        auth: owner.creds,
      });
      expect(kicked.status).toBe(204);
      // sipp's exit status says its scenario (BYE received, answered) passed; its error file may
      // also hold overload warnings of a loaded machine.
      expect((await callers[2]!.done).code).toBe(0);
      const after = await until(
        () => hooks.requestsTo('/after').map((r) => new URLSearchParams(r.rawBody.toString())),
        (l) => l.length === 1,
      );
      expect(after[0]!.get('CallSid')).toBe(callOf[2]);
      expect(after[0]!.get('DialCallStatus')).toBe('completed');
      expect(
        (
          await until(
            async () => (await get(`${base}/${cf}/Participants.json`)).json.calls as Participant[],
            (l) => l.length === 2,
          )
        ).map((p) => p.call_sid),
      ).toEqual([callOf[0], callOf[1]]);
      expect((await get(`${base}/${cf}/Participants/${callOf[2]}.json`)).status).toBe(404);

      // Another account sees none of it, live or not.
      const theirs = `${API}/Accounts/${stranger.sid}/Conferences`;
      expect((await get(`${theirs}/${cf}.json`, stranger.creds)).status).toBe(404);
      expect((await get(`${theirs}/${cf}/Participants.json`, stranger.creds)).status).toBe(404);
      expect((await post(`${theirs}/${cf}.json`, { Status: 'completed' }, stranger.creds)).status).toBe(404);
      expect(
        (await post(`${theirs}/${cf}/Participants/${callOf[0]}.json`, { Mute: 'false' }, stranger.creds))
          .status,
      ).toBe(404);
      expect((await get(`${theirs}.json`, stranger.creds)).json.conferences).toEqual([]);

      // End the room: both remaining calls are released and the conference completes.
      const ended = await post(`${base}/${cf}.json`, { Status: 'completed' });
      expect(ended.status).toBe(200);
      for (const c of callers.slice(0, 2)) expect((await c.done).code).toBe(0);
      const done = await until(
        async () => (await get(`${base}/${cf}.json`)).json,
        (c) => c.status === 'COMPLETED',
      );
      expect(done).toMatchObject({
        reason_conference_ended: 'conference-ended-via-api',
        call_sid_ending_conference: null,
      });
      expect((await get(`${base}/${cf}/Participants.json`)).json.calls).toEqual([]);
      await until(
        async () =>
          (await get(`${API}/Accounts/${owner.sid}/Calls.json?To=${encodeURIComponent(number)}`)).json.calls,
        (l: Array<{ status: string }>) => l.length === 3 && l.every((c) => c.status === 'completed'),
      );
      expect((await post(`${base}/${cf}.json`, { Status: 'completed' })).status).toBe(409);

      // The status callbacks, signed, in order, for the events asked for.
      const callbacks = await until(
        () => hooks.requestsTo('/confcb'),
        (l) => l.some((r) => r.rawBody.toString().includes('conference-end')),
      );
      expect(callbacks.every((r) => typeof r.headers['x-twilio-signature'] === 'string')).toBe(true);
      const events = callbacks.map((r) => new URLSearchParams(r.rawBody.toString()));
      expect(events.every((e) => e.get('ConferenceSid') === cf && e.get('FriendlyName') === room)).toBe(true);
      const seq = events.map((e) => Number(e.get('SequenceNumber')));
      expect(seq).toEqual([...seq].sort((a, b) => a - b));
      const names = events.map((e) => e.get('StatusCallbackEvent'));
      expect(names.filter((n) => n === 'participant-join')).toHaveLength(3);
      expect(names.filter((n) => n === 'conference-start')).toHaveLength(1);
      expect(names.filter((n) => n === 'participant-mute')).toHaveLength(2);
      expect(names.filter((n) => n === 'participant-hold')).toHaveLength(1);
      expect(names.filter((n) => n === 'participant-unhold')).toHaveLength(1);
      expect(names.filter((n) => n === 'participant-leave')).toHaveLength(3);
      expect(names.at(-1)).toBe('conference-end');
      const mute = events.find((e) => e.get('StatusCallbackEvent') === 'participant-mute')!;
      expect(mute.get('CallSid')).toBe(callOf[0]);
      expect(mute.get('Muted')).toBe('true');
      expect(events.at(-1)!.get('ReasonConferenceEnded')).toBe('conference-ended-via-api');
      const firstLeave = events.find((e) => e.get('StatusCallbackEvent') === 'participant-leave')!;
      expect(firstLeave.get('CallSid')).toBe(callOf[2]);

      // List filters.
      const list = async (query: string) =>
        ((await get(`${base}.json?${query}`)).json.conferences as Array<{ sid: string }>).map((c) => c.sid);
      const today = new Date().toISOString().slice(0, 10);
      expect(await list('Status=COMPLETED')).toContain(cf);
      expect(await list('Status=RUNNING_MODERATOR_PRESENT')).not.toContain(cf);
      expect(await list(`FriendlyName=${room}`)).toEqual([cf]);
      expect(await list('FriendlyName=nobody-here')).toEqual([]);
      expect(await list(`DateCreated=${today}`)).toContain(cf);
      expect(await list('DateCreated=2001-01-01')).toEqual([]);
      expect(await list(`DateCreated%3E=${today}&FriendlyName=${room}`)).toEqual([cf]);
      expect(await list('DateCreated%3C=2001-01-01')).toEqual([]);
      expect((await get(`${base}.json?Status=running`)).status).toBe(400);
      expect((await get(`${base}.json?DateCreated=yesterday`)).status).toBe(400);
    } finally {
      for (const c of callers) c.kill();
      for (const p of peers) p.close();
    }
  }, 120_000);

  it('unknown conferences and participants are not found; a command needs a parameter', async () => {
    const base = `${API}/Accounts/${owner.sid}/Conferences`;
    const unknown = `CF${'0'.repeat(32)}`;
    expect((await get(`${base}/${unknown}.json`)).status).toBe(404);
    expect((await get(`${base}/${unknown}/Participants.json`)).status).toBe(404);
    expect((await post(`${base}/${unknown}.json`, { Status: 'completed' })).status).toBe(404);
    expect(
      (
        await ts.request('DELETE', `${base}/${unknown}/Participants/CA${'0'.repeat(32)}.json`, {
          auth: owner.creds,
        })
      ).status,
    ).toBe(404);
    const empty = await get(`${base}.json`);
    expect(empty.status).toBe(200);
    expect(empty.json).toMatchObject({ page: 0, conferences: expect.any(Array) });
  });
});
