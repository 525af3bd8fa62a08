/**
 * Browser phones with WebRTC media, end to end: headless Chromium runs the `/phone` page (JsSIP),
 * registered over WSS, with Chromium's fake microphone (a beep tone). Evidence is taken on the
 * server: the media engine's counters of the call's endpoint (packets each way, which for a browser
 * are SRTP) and the recording's samples.
 * - a browser calls a number whose markup says a greeting then `<Record>`s: the greeting goes out,
 *   the browser's audio comes in, and the WAV is not silent;
 * - a second page calls the first (client to client): both answer, media flows both ways on both legs;
 * - the keypad's DTMF reaches `<Gather>`;
 * - a desk phone (baresip, UDP, plain RTP) calls a number whose markup `<Dial><Client>`s a browser:
 *   bridged, media both ways.
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EndpointStats } from '../../../src/media/port.js';
import { Baresip } from '../../support/baresip.js';
import { type Chromium, launchChromium, loopbackOnly, WEBRTC_ARGS } from '../../support/browser.js';
import {
  callState,
  dial,
  openPhone,
  type PhonePage,
  register,
  registrationText,
} from '../../support/phone.js';
import { API, startTestServer, type TestServer } from '../../support/server.js';
import { selfSignedCertificate, type TestCertificate } from '../../support/tls-cert.js';
import { until, markup as xml } from '../../support/until.js';
import { startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';

/** One second of 20 ms packets: well past a stray packet or two, well short of the calls' length. */
const FLOWING = 50;

let ts: TestServer;
let cert: TestCertificate;
let hooks: WebhookServer;
let browser: Chromium | undefined;
let refused: string[] = [];
let domain = '';
/** Our SDP of every endpoint the engine made (offer or answer), by endpoint id. */
const localSdp = new Map<string, string>();
let unsubscribe: (() => void) | undefined;

beforeAll(async () => {
  cert = await selfSignedCertificate();
  ts = await startTestServer({ label: 'browsermedia', env: { SIP_WSS_PORT: '0', ...cert.env } });
  hooks = await startWebhookServer();
  domain = ts.server.config.organization.defaultDomain;
  for (const login of ['alice', 'bob', 'carol']) {
    const c = await ts.request('POST', `${API}/Accounts/${ts.admin.sid}/Clients.json`, {
      form: { Login: login, Password: `${login}-secret-1` },
    });
    expect(c.status).toBe(201);
  }
  unsubscribe = ts.server.media!.subscribe((e) => {
    if (e.type === 'media.endpointReady') localSdp.set(e.endpoint.endpointId, e.endpoint.sdp);
  });
  browser = await launchChromium({ args: WEBRTC_ARGS });
  refused = await loopbackOnly(browser.context);
}, 90_000);

afterAll(async () => {
  unsubscribe?.();
  await browser?.close();
  await hooks?.close();
  await ts?.dispose();
  await cert?.dispose();
});

async function registeredPhone(login: string): Promise<PhonePage> {
  const phone = await openPhone((browser as Chromium).context, ts.url);
  await register(phone.page, login, `${login}-secret-1`);
  await expect.poll(() => registrationText(phone.page), { timeout: 15_000 }).toBe('Registered');
  return phone;
}

/** Whether the endpoint speaks WebRTC (DTLS-SRTP with ICE) or plain RTP, from our SDP. */
function profileOf(endpointId: string): 'webrtc' | 'rtp' {
  const sdp = localSdp.get(endpointId) ?? '';
  if (/^m=audio \d+ UDP\/TLS\/RTP\/SAVPF /m.test(sdp) && /^a=fingerprint:/m.test(sdp)) return 'webrtc';
  expect(sdp).toMatch(/^m=audio \d+ RTP\/AVP /m);
  return 'rtp';
}

const stats = (endpointId: string): Promise<EndpointStats | null> => ts.server.media!.stats(endpointId);

/** Sids of the calls in progress (each call's endpoint is named by its sid). */
async function liveCallSids(): Promise<string[]> {
  const list = await ts.request('GET', `${API}/Accounts/${ts.admin.sid}/Calls.json?Status=in-progress`);
  return (list.json.calls as Array<{ sid: string }>).map((c) => c.sid);
}

/** Waits until every live call's endpoint has sent and received FLOWING packets; returns them. */
async function mediaBothWays(calls: number): Promise<EndpointStats[]> {
  return until(
    async () => {
      const sids = await liveCallSids();
      const all = await Promise.all(sids.map(stats));
      return all.filter((s): s is EndpointStats => s !== null);
    },
    (all) => all.length === calls && all.every((s) => s.packetsIn >= FLOWING && s.packetsOut >= FLOWING),
    20_000,
  );
}

function rms(wav: Buffer): number {
  expect(wav.subarray(0, 4).toString()).toBe('RIFF');
  const samples = new Int16Array(wav.buffer, wav.byteOffset + 44, (wav.length - 44) >> 1);
  let energy = 0;
  for (const v of samples) energy += v * v;
  return Math.sqrt(energy / Math.max(1, samples.length));
}

describe('browser phones with WebRTC media', () => {
  it('a browser calls a number: the greeting goes out over SRTP, its audio is recorded', async () => {
    hooks.script(
      '/greet',
      xml(
        '<Say>Hello from Switchboard. Please leave a message.</Say>' +
          '<Record action="/recorded" maxLength="3" timeout="0" playBeep="false"/>',
      ),
    );
    hooks.script('/recorded', xml('<Hangup/>'));
    const number = '+15550700001';
    const n = await ts.request('POST', `${API}/Accounts/${ts.admin.sid}/IncomingPhoneNumbers.json`, {
      form: { PhoneNumber: number, VoiceUrl: `${hooks.origin}/greet` },
    });
    expect(n.status).toBe(201);

    const { page, errors } = await registeredPhone('alice');
    await dial(page, number);
    await expect.poll(() => callState(page), { timeout: 15_000 }).toBe('In call');
    const [greet] = await until(
      () => hooks.requestsTo('/greet'),
      (r) => r.length === 1,
    );
    const sid = new URLSearchParams(greet!.rawBody.toString()).get('CallSid') as string;
    expect(new URLSearchParams(greet!.rawBody.toString()).get('From')).toBe('client:alice');
    // The greeting (out) and the browser's beep (in), counted by the call's endpoint.
    const flowing = await until(
      () => stats(sid),
      (s) => s !== null && s.packetsOut >= FLOWING && s.packetsIn >= FLOWING,
      20_000,
    );
    expect(flowing!.packetsMalformed).toBe(0);
    expect(profileOf(sid)).toBe('webrtc');

    const [recorded] = await until(
      () => hooks.requestsTo('/recorded'),
      (r) => r.length === 1,
      20_000,
    );
    const url = new URLSearchParams(recorded!.rawBody.toString()).get('RecordingUrl');
    const wav = Buffer.from(await (await fetch(`${url}.wav`)).arrayBuffer());
    expect(wav.length).toBeGreaterThan(8000 * 2);
    expect(rms(wav)).toBeGreaterThan(300);
    await expect.poll(() => callState(page), { timeout: 10_000 }).toMatch(/^Ended/);
    const record = await ts.request('GET', `${API}/Accounts/${ts.admin.sid}/Calls/${sid}.json`);
    expect(record.json).toMatchObject({ from: 'client:alice', to: number, status: 'completed' });
    expect(errors).toEqual([]);
    await page.close();
  }, 90_000);

  it("the page's keypad sends DTMF that the call's Gather collects", async () => {
    hooks.script('/gather', xml('<Gather numDigits="2" timeout="10" action="/gathered"/>'));
    hooks.script('/gathered', xml('<Hangup/>'));
    const number = '+15550700002';
    const n = await ts.request('POST', `${API}/Accounts/${ts.admin.sid}/IncomingPhoneNumbers.json`, {
      form: { PhoneNumber: number, VoiceUrl: `${hooks.origin}/gather` },
    });
    expect(n.status).toBe(201);
    const { page, errors } = await registeredPhone('alice');
    await dial(page, number);
    await expect.poll(() => callState(page), { timeout: 15_000 }).toBe('In call');
    const keypad = page.getByRole('group', { name: 'Keypad' });
    // Keys are pressed once the call's audio flows (DTMF rides in the media).
    const [gather] = await until(
      () => hooks.requestsTo('/gather'),
      (r) => r.length === 1,
    );
    await until(
      () => stats(new URLSearchParams(gather!.rawBody.toString()).get('CallSid') as string),
      (st) => st !== null && st.packetsIn >= FLOWING,
      20_000,
    );
    await keypad.getByRole('button', { name: '4', exact: true }).click();
    await page.waitForTimeout(400);
    await keypad.getByRole('button', { name: '7', exact: true }).click();
    const [gathered] = await until(
      () => hooks.requestsTo('/gathered'),
      (r) => r.length === 1,
      15_000,
    );
    expect(new URLSearchParams(gathered!.rawBody.toString()).get('Digits')).toBe('47');
    await expect.poll(() => callState(page), { timeout: 10_000 }).toMatch(/^Ended/);
    expect(errors).toEqual([]);
    await page.close();
  }, 90_000);

  it('one browser calls another: both answer and media flows both ways on both legs', async () => {
    const bob = await registeredPhone('bob');
    const alice = await registeredPhone('alice');
    await dial(alice.page, 'bob');
    await bob.page.locator('#incoming').waitFor({ state: 'visible', timeout: 15_000 });
    expect(await bob.page.locator('#caller').textContent()).toBe('alice');
    await bob.page.getByRole('button', { name: 'Answer' }).click();
    await expect.poll(() => callState(alice.page), { timeout: 15_000 }).toBe('In call');
    await expect.poll(() => callState(bob.page), { timeout: 15_000 }).toBe('In call');
    const legs = await mediaBothWays(2);
    // The browser's own call answered with WebRTC, and the call to the other browser offered it.
    expect(legs.map((l) => profileOf(l.endpointId))).toEqual(['webrtc', 'webrtc']);
    // The supervisor sees two client legs like any other.
    const live = await ts.request('GET', `${API}/Accounts/${ts.admin.sid}/Supervisor.json/livecalls`);
    expect(live.status).toBe(200);
    const views = (live.json as Array<{ type: string; from: string; to: string }>).map((c) => ({
      type: c.type,
      from: c.from,
      to: c.to,
    }));
    expect(views).toHaveLength(2);
    expect(views.every((v) => v.type === 'CLIENT')).toBe(true);
    expect(views).toEqual([
      { type: 'CLIENT', from: 'client:alice', to: 'client:bob' },
      { type: 'CLIENT', from: 'client:alice', to: 'client:bob' },
    ]);
    await alice.page.getByRole('button', { name: 'Hang up' }).click();
    await expect.poll(() => callState(bob.page), { timeout: 10_000 }).toMatch(/^Ended/);
    expect([...alice.errors, ...bob.errors]).toEqual([]);
    await alice.page.close();
    await bob.page.close();
  }, 90_000);

  it('a desk phone (baresip) calls a number that <Dial><Client>s the browser: bridged, media both ways', async () => {
    hooks.script('/dial-bob', xml('<Dial timeout="15"><Client>bob</Client></Dial>'));
    const number = '+15550700003';
    const n = await ts.request('POST', `${API}/Accounts/${ts.admin.sid}/IncomingPhoneNumbers.json`, {
      form: { PhoneNumber: number, VoiceUrl: `${hooks.origin}/dial-bob` },
    });
    expect(n.status).toBe(201);
    const bob = await registeredPhone('bob');
    const target = `127.0.0.1:${ts.server.sip!.stack.port}`;
    const desk = new Baresip({
      aor: `sip:carol@${target};transport=udp`,
      password: 'carol-secret-1',
      regint: 600,
      audioSource: resolve(import.meta.dirname, '../../fixtures/media/prompt-8k.wav'),
      maxSeconds: 60,
    });
    try {
      await desk.start();
      await until(
        () => ts.server.sip!.registrar.locate('carol', domain),
        (b) => b.length === 1,
      );
      await desk.command('dial', `sip:${number}@${target}`);
      await bob.page.locator('#incoming').waitFor({ state: 'visible', timeout: 15_000 });
      expect(await bob.page.locator('#caller').textContent()).toBe('carol');
      await bob.page.getByRole('button', { name: 'Answer' }).click();
      await desk.waitForEvent('CALL_ESTABLISHED', 15_000);
      const legs = await mediaBothWays(2);
      // The desk phone's leg is plain RTP, the browser's WebRTC: the engine bridges the two.
      expect(legs.map((l) => profileOf(l.endpointId)).sort()).toEqual(['rtp', 'webrtc']);
      await bob.page.getByRole('button', { name: 'Hang up' }).click();
      await desk.waitForEvent('CALL_CLOSED', 10_000);
    } finally {
      await desk.stop();
    }
    expect(bob.errors).toEqual([]);
    expect(refused).toEqual([]);
    await bob.page.close();
  }, 90_000);
});
