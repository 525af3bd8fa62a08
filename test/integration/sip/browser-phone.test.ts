/**
 * Browser phones over SIP/WSS (RFC 7118) with the sample page, in headless Chromium with JsSIP:
 * the page registers as a Client over the WSS listener (test certificate made at runtime), the
 * binding records protocol WSS and JsSIP's `.invalid` contact; a wrong password shows the failure;
 * a call to the client rings in the page with the caller, and Decline answers 603; Unregister
 * removes the binding. A raw WSS client sees our Via and Contact name WSS and the WSS port.
 * Media (WebRTC) is browser-media.test.ts.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { SipEvent } from '../../../src/sip/port.js';
import { type Chromium, launchChromium, loopbackOnly, WEBRTC_ARGS } from '../../support/browser.js';
import { callState, openPhone, register, registrationText } from '../../support/phone.js';
import { API, startTestServer, type TestServer } from '../../support/server.js';
import { selfSignedCertificate, type TestCertificate } from '../../support/tls-cert.js';
import { until } from '../../support/until.js';

let ts: TestServer;
let cert: TestCertificate;
let browser: Chromium | undefined;
let refused: string[] = [];
let domain = '';

beforeAll(async () => {
  cert = await selfSignedCertificate();
  ts = await startTestServer({ label: 'browserphone', env: { SIP_WSS_PORT: '0', ...cert.env } });
  domain = ts.server.config.organization.defaultDomain;
  for (const [login, password] of [
    ['alice', 'alice-secret-1'],
    ['bob', 'bob-secret-1'],
  ]) {
    const c = await ts.request('POST', `${API}/Accounts/${ts.admin.sid}/Clients.json`, {
      form: { Login: login as string, Password: password as string },
    });
    expect(c.status).toBe(201);
  }
  browser = await launchChromium({ args: WEBRTC_ARGS });
  refused = await loopbackOnly(browser.context);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await ts?.dispose();
  await cert?.dispose();
});

const context = () => (browser as Chromium).context;

describe('the web phone over WSS', () => {
  it('registers as a client; the binding is WSS with the browser contact', async () => {
    const { page, errors } = await openPhone(context(), ts.url);
    const wssPort = ts.server.sip!.bound!.wss;
    expect(await page.getByLabel('Server').inputValue()).toBe(`wss://127.0.0.1:${wssPort}`);
    expect(await page.getByLabel('Domain').inputValue()).toBe(domain);

    await register(page, 'alice', 'alice-secret-1');
    await expect.poll(() => registrationText(page), { timeout: 15_000 }).toBe('Registered');
    const [binding] = await ts.server.sip!.registrar.locate('alice', domain);
    expect(binding?.flow.protocol).toBe('WSS');
    expect(binding?.flow.local.port).toBe(wssPort);
    expect(binding?.contact).toMatch(/^sip:[^@]+@[a-z0-9]+\.invalid;transport=ws$/);
    expect(binding?.userAgent).toMatch(/JsSIP/);

    await page.getByRole('button', { name: 'Unregister' }).click();
    await until(
      () => ts.server.sip!.registrar.locate('alice', domain),
      (b) => b.length === 0,
    );
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('shows a wrong password as a failed registration', async () => {
    const { page } = await openPhone(context(), ts.url);
    await register(page, 'alice', 'not-the-password');
    await expect.poll(() => registrationText(page), { timeout: 15_000 }).toMatch(/^Registration failed: /);
    expect(await ts.server.sip!.registrar.locate('alice', domain)).toEqual([]);
    await page.close();
  }, 60_000);

  it('rings with the caller on a call to the client, and Decline answers 603', async () => {
    const { page, errors } = await openPhone(context(), ts.url);
    await register(page, 'bob', 'bob-secret-1');
    await expect.poll(() => registrationText(page), { timeout: 15_000 }).toBe('Registered');
    const [binding] = await ts.server.sip!.registrar.locate('bob', domain);

    const events: SipEvent[] = [];
    const off = ts.server.sip!.legs.onEvent((e) => events.push(e));
    ts.server.sip!.legs.placeCall('CA-wss-decline', {
      requestUri: binding!.contact,
      from: { uri: `sip:+15550001111@${domain}` },
      to: { uri: `sip:bob@${domain}` },
      flow: binding!.flow,
      sdp: offerSdp(),
    });
    await page.locator('#incoming').waitFor({ state: 'visible', timeout: 15_000 });
    expect(await page.locator('#caller').textContent()).toBe('+15550001111');
    expect(await callState(page)).toBe('Ringing');
    await page.getByRole('button', { name: 'Decline' }).click();
    const failed = await until(
      () => events.find((e) => e.type === 'sip.failed' && e.legId === 'CA-wss-decline'),
      (e) => e !== undefined,
    );
    expect(failed).toMatchObject({ status: 603 });
    await expect.poll(() => callState(page)).toMatch(/^Ended/);
    off();
    expect(errors).toEqual([]);
    expect(refused).toEqual([]);
    await page.close();
  }, 60_000);
});

describe('SIP over WSS, raw', () => {
  it('stamps Via and Contact with WSS and the WSS port on a call over the connection', async () => {
    const wssPort = ts.server.sip!.bound!.wss as number;
    const ws = new WebSocket(`wss://127.0.0.1:${wssPort}`, 'sip', { rejectUnauthorized: false });
    const received: string[] = [];
    ws.on('message', (d) => received.push(String(d)));
    await new Promise((r, j) => {
      ws.once('open', r);
      ws.once('error', j);
    });
    expect(ws.protocol).toBe('sip');
    // OPTIONS needs no credentials: enough to learn the flow the server sees.
    ws.send(
      [
        `OPTIONS sip:${domain} SIP/2.0`,
        'Via: SIP/2.0/WSS q1w2e3.invalid;branch=z9hG4bKwssopt1;rport',
        'From: <sip:raw@q1w2e3.invalid>;tag=r1',
        `To: <sip:${domain}>`,
        'Call-ID: wss-opt-1',
        'CSeq: 1 OPTIONS',
        'Max-Forwards: 70',
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n'),
    );
    const ok = await until(
      () => received.find((m) => m.startsWith('SIP/2.0 200')),
      (m) => m !== undefined,
    );
    expect(ok).toMatch(/^Via: SIP\/2\.0\/WSS q1w2e3\.invalid;branch=z9hG4bKwssopt1;/im);
    // rport (RFC 3581) tells the client's side of the connection, the flow a call to it takes.
    const port = Number(/;rport=(\d+)/.exec(ok as string)?.[1]);
    expect(port).toBeGreaterThan(0);
    const local = { address: '127.0.0.1', port: wssPort };
    ts.server.sip!.legs.placeCall('CA-wss-raw', {
      requestUri: 'sip:raw@q1w2e3.invalid;transport=ws',
      from: { uri: `sip:+15550002222@${domain}` },
      to: { uri: `sip:raw@${domain}` },
      flow: { protocol: 'WSS', address: '127.0.0.1', port, local },
    });
    const invite = await until(
      () => received.find((m) => m.startsWith('INVITE ')),
      (m) => m !== undefined,
    );
    expect(invite).toMatch(new RegExp(`^Via: SIP/2\\.0/WSS 127\\.0\\.0\\.1:${wssPort};`, 'im'));
    expect(invite).toMatch(
      new RegExp(`^Contact:\\s*<sip:CA-wss-raw@127\\.0\\.0\\.1:${wssPort};transport=wss>`, 'im'),
    );
    ts.server.sip!.legs.cancel('CA-wss-raw');
    ws.close();
  }, 30_000);
});

describe('SIP over WSS, bad input', () => {
  it('survives a failed TLS handshake, garbage frames and a client without the sip subprotocol', async () => {
    const wssPort = ts.server.sip!.bound!.wss as number;
    // Not TLS at all: the handshake fails and the connection is dropped.
    const raw = await new Promise<boolean>((resolve) => {
      const s = connect({ host: '127.0.0.1', port: wssPort }, () =>
        s.write('REGISTER sip:x SIP/2.0\r\n\r\n'),
      );
      s.on('error', () => resolve(true));
      s.on('close', () => resolve(true));
    });
    expect(raw).toBe(true);
    const noSip = new WebSocket(`wss://127.0.0.1:${wssPort}`, { rejectUnauthorized: false });
    const outcome = await new Promise<string>((resolve) => {
      noSip.once('open', () => resolve(`open:${noSip.protocol}`));
      noSip.once('error', () => resolve('refused'));
    });
    noSip.terminate();
    expect(outcome).toBe('refused');
    const ws = new WebSocket(`wss://127.0.0.1:${wssPort}`, 'sip', { rejectUnauthorized: false });
    await new Promise((r, j) => {
      ws.once('open', r);
      ws.once('error', j);
    });
    ws.send(Buffer.from([0xff, 0x00, 0x13, 0x37]));
    ws.send('INVITE nonsense\r\n\r\n');
    ws.close();
    // Still serving: a fresh OPTIONS over WSS is answered.
    const again = new WebSocket(`wss://127.0.0.1:${wssPort}`, 'sip', { rejectUnauthorized: false });
    const got: string[] = [];
    again.on('message', (d) => got.push(String(d)));
    await new Promise((r, j) => {
      again.once('open', r);
      again.once('error', j);
    });
    again.send(
      [
        `OPTIONS sip:${domain} SIP/2.0`,
        'Via: SIP/2.0/WSS z9z9.invalid;branch=z9hG4bKwssopt2',
        'From: <sip:raw@z9z9.invalid>;tag=r2',
        `To: <sip:${domain}>`,
        'Call-ID: wss-opt-2',
        'CSeq: 1 OPTIONS',
        'Max-Forwards: 70',
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n'),
    );
    const ok = await until(
      () => got.find((m) => m.startsWith('SIP/2.0 200')),
      (m) => m !== undefined,
    );
    expect(ok).toMatch(/^SIP\/2\.0 200/);
    again.close();
  }, 30_000);
});

/** A plain offer (the page never reaches media: it declines). */
function offerSdp(): string {
  return [
    'v=0',
    'o=- 1 1 IN IP4 127.0.0.1',
    's=-',
    'c=IN IP4 127.0.0.1',
    't=0 0',
    'm=audio 40000 RTP/AVP 0',
    'a=rtpmap:0 PCMU/8000',
    '',
  ].join('\r\n');
}
