/**
 * A node under limits (docs/sip.md "Hardening"): with its whole RTP port range taken, an INVITE
 * gets 503 with Retry-After (the caller may retry elsewhere or later) and the account a
 * Notification 13250; with SIP_BLOCK_PRIVATE=true, gateway proxies in loopback or private ranges
 * (by address or by a name that resolves there) are refused at write time.
 */
import { createSocket, type Socket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, type Credentials, startTestServer, type TestServer } from '../../support/server.js';
import { OFFER, SipPeer, sipRequest, statusOf } from '../../support/sip-peer.js';
import { until, markup as xml } from '../../support/until.js';
import { startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';

let ts: TestServer;
let hooks: WebhookServer;
let peer: SipPeer;
let rtp: Socket;
let owner: { sid: string; creds: Credentials };

/** An even UDP port on 127.0.0.1, held by us so the media engine finds its range full. */
async function holdEvenPort(): Promise<Socket> {
  for (let i = 0; i < 50; i++) {
    const port = 30_000 + 2 * Math.floor(Math.random() * 10_000);
    const s = createSocket('udp4');
    const ok = await new Promise<boolean>((r) => {
      s.once('error', () => r(false));
      s.bind(port, '127.0.0.1', () => r(true));
    });
    if (ok) return s;
    s.close();
  }
  throw new Error('no even port free');
}

beforeAll(async () => {
  rtp = await holdEvenPort();
  const port = rtp.address().port;
  ts = await startTestServer({
    label: 'siplimits',
    env: { SIP_BLOCK_PRIVATE: 'true', RTP_PORT_MIN: String(port), RTP_PORT_MAX: String(port + 1) },
  });
  hooks = await startWebhookServer();
  peer = await SipPeer.open('127.0.0.2');
  const r = await ts.request('POST', `${API}/Accounts.json`, {
    form: { EmailAddress: 'limits@example.test', Password: 'password-123', Role: 'Developer' },
  });
  owner = { sid: r.json.sid, creds: { user: r.json.sid, secret: r.json.auth_token } };
});
afterAll(async () => {
  peer?.close();
  rtp?.close();
  await hooks?.close();
  await ts?.dispose();
});

describe('RTP port range exhausted', () => {
  it('the INVITE gets 503 with Retry-After, and the account Notification 13250', async () => {
    hooks.script('/say', xml('<Say>hello</Say>'));
    const number = '+15550810001';
    const n = await ts.request('POST', `${API}/Accounts/${owner.sid}/IncomingPhoneNumbers.json`, {
      auth: owner.creds,
      form: { PhoneNumber: number, VoiceUrl: `${hooks.origin}/say` },
    });
    expect(n.status).toBe(201);
    const sipPort = ts.server.sip!.stack.port;
    const { text, branch } = sipRequest(sipPort, {
      method: 'INVITE',
      uri: `sip:${number}@127.0.0.1:${sipPort}`,
      to: `<sip:${number}@127.0.0.1>`,
      body: OFFER,
    });
    peer.send(text, sipPort);
    const final = (await peer.final(branch, 15_000)) ?? '';
    expect(statusOf(final)).toBe(503);
    expect(final).toMatch(/^Retry-After: \d+/im);
    const notes = await until(
      async () =>
        (await ts.request('GET', `${API}/Accounts/${owner.sid}/Notifications.json`, { auth: owner.creds }))
          .json.notifications as Array<{ error_code: number | string }>,
      (l) => l.some((x) => Number(x.error_code) === 13250),
    );
    expect(notes.some((x) => Number(x.error_code) === 13250)).toBe(true);
  });
});

describe('SIP_BLOCK_PRIVATE=true', () => {
  it.each([
    '10.1.2.3',
    'sip:gw@192.168.0.10:5060',
    '127.0.0.1:5999',
    'localhost',
  ])('a gateway Proxy of %s is refused (400 naming Proxy)', async (proxy) => {
    const r = await ts.request('POST', `${API}/Accounts/${ts.admin.sid}/Management/Gateways.json`, {
      form: { Proxy: proxy },
    });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ status: 400, code: 21100 });
    expect(r.json.message).toMatch(/Proxy/);
  });

  it('a public gateway Proxy is still accepted', async () => {
    const r = await ts.request('POST', `${API}/Accounts/${ts.admin.sid}/Management/Gateways.json`, {
      form: { Proxy: '192.0.2.10:5060' },
    });
    expect(r.status).toBe(201);
    await ts.request('DELETE', `${API}/Accounts/${ts.admin.sid}/Management/Gateways/${r.json.sid}.json`);
  });
});
