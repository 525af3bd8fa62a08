/**
 * Hostile SIP input against the running service (docs/sip.md "Hardening"): NUL bytes that used to
 * reach the call record, a handler that fails, merged INVITEs, unauthenticated REGISTER floods, and
 * SIP destinations in the metadata range. After each, the node still answers OPTIONS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, type Credentials, startTestServer, type TestServer } from '../../support/server.js';
import { OFFER, SipPeer, sipRequest, statusOf } from '../../support/sip-peer.js';
import { runSipp } from '../../support/sipp.js';
import { until, markup as xml } from '../../support/until.js';
import { startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';

let ts: TestServer;
let hooks: WebhookServer;
let peer: SipPeer;
let sipPort: number;
let owner: { sid: string; creds: Credentials };
let numberSeq = 0;

beforeAll(async () => {
  ts = await startTestServer({ label: 'siphard' });
  hooks = await startWebhookServer();
  peer = await SipPeer.open('127.0.0.2');
  sipPort = ts.server.sip!.stack.port;
  const r = await ts.request('POST', `${API}/Accounts.json`, {
    form: { EmailAddress: 'hardening@example.test', Password: 'password-123', Role: 'Developer' },
  });
  owner = { sid: r.json.sid, creds: { user: r.json.sid, secret: r.json.auth_token } };
});
afterAll(async () => {
  peer?.close();
  await hooks?.close();
  await ts?.dispose();
});

async function numberFor(path: string): Promise<string> {
  const number = `+1555080${String(numberSeq++).padStart(4, '0')}`;
  const r = await ts.request('POST', `${API}/Accounts/${owner.sid}/IncomingPhoneNumbers.json`, {
    auth: owner.creds,
    form: { PhoneNumber: number, VoiceUrl: `${hooks.origin}${path}` },
  });
  expect(r.status).toBe(201);
  return number;
}

async function callsTo(number: string): Promise<Array<{ sid: string; status: string; direction: string }>> {
  const r = await ts.request(
    'GET',
    `${API}/Accounts/${owner.sid}/Calls.json?To=${encodeURIComponent(number)}`,
    {
      auth: owner.creds,
    },
  );
  return r.json.calls;
}

async function expectOptionsAnswered(): Promise<void> {
  const { text, branch } = sipRequest(sipPort, { method: 'OPTIONS' });
  peer.send(text, sipPort);
  expect(statusOf((await peer.final(branch)) ?? '')).toBe(200);
}

function invite(number: string, o: Parameters<typeof sipRequest>[1] = {}) {
  return sipRequest(sipPort, {
    method: 'INVITE',
    uri: `sip:${number}@127.0.0.1:${sipPort}`,
    to: `<sip:${number}@127.0.0.1>`,
    body: OFFER,
    ...o,
  });
}

describe('NUL bytes in an INVITE', () => {
  it.each([
    ['From user', { from: '<sip:ca\u0000ller@carrier.invalid>' }],
    ['From user, escaped', { from: '<sip:ca%00ller@carrier.invalid>' }],
    ['display name', { from: '"Eve\u0000" <sip:caller@carrier.invalid>' }],
    ['Call-ID', { callId: 'nul\u0000callid@carrier.invalid' }],
  ])('in the %s → 400, no call, the node keeps answering', async (_what, o) => {
    hooks.script('/nul', xml('<Reject reason="busy"/>'));
    const number = await numberFor('/nul');
    const { text, branch } = invite(number, o);
    peer.send(text, sipPort);
    expect(statusOf((await peer.final(branch)) ?? '')).toBe(400);
    await expectOptionsAnswered();
    expect(await callsTo(number)).toEqual([]);
  });
});

describe('NUL in a SIP MESSAGE body', () => {
  it('a text/plain body with NUL → 400, no message stored; a clean one is still taken', async () => {
    const number = await numberFor('/unused');
    const message = (body: string) =>
      sipRequest(sipPort, {
        method: 'MESSAGE',
        uri: `sip:${number}@127.0.0.1:${sipPort}`,
        to: `<sip:${number}@127.0.0.1>`,
        body,
        contentType: 'text/plain',
      });
    const bad = message('hello\u0000world');
    peer.send(bad.text, sipPort);
    expect(statusOf((await peer.final(bad.branch)) ?? '')).toBe(400);
    const good = message('hello world');
    peer.send(good.text, sipPort);
    const status = statusOf((await peer.final(good.branch)) ?? '');
    expect(status).toBeGreaterThanOrEqual(200);
    expect(status).not.toBe(400);
    expect(status).toBeLessThan(500);
    await expectOptionsAnswered();
  });
});

describe('a failing handler ends its own request only', () => {
  it('a store that rejects gives the INVITE 500; OPTIONS and the next call still work', async () => {
    hooks.script('/busy', xml('<Reject reason="busy"/>'));
    const number = await numberFor('/busy');
    const calls = ts.server.stores.calls;
    const insert = calls.insert;
    calls.insert = () => Promise.reject(new Error('simulated store failure'));
    try {
      const first = invite(number);
      peer.send(first.text, sipPort);
      expect(statusOf((await peer.final(first.branch)) ?? '')).toBe(500);
    } finally {
      calls.insert = insert;
    }
    await expectOptionsAnswered();
    const next = invite(number);
    peer.send(next.text, sipPort);
    expect(statusOf((await peer.final(next.branch)) ?? '')).toBe(486);
  });
});

describe('merged requests (RFC 3261 §8.2.2.2)', () => {
  it('INVITEs with one Call-ID, From tag and CSeq but other branches get 482 and make no call', async () => {
    hooks.script('/slow-busy', xml('<Reject reason="busy"/>', 500));
    const number = await numberFor('/slow-busy');
    const callId = `merged-${Date.now()}@carrier.invalid`;
    const sent = Array.from({ length: 20 }, (_, i) =>
      invite(number, { callId, fromTag: 'merged', cseq: 7, branch: `z9hG4bK-merged-${i}` }),
    );
    for (const s of sent) peer.send(s.text, sipPort);
    const finals = await Promise.all(sent.map((s) => peer.final(s.branch)));
    const statuses = finals.map((f) => statusOf(f ?? ''));
    expect(statuses.filter((s) => s === 482)).toHaveLength(19);
    expect(statuses.filter((s) => s === 486)).toHaveLength(1);
    expect(await callsTo(number)).toHaveLength(1);
  });
});

describe('digest nonces are stateless', () => {
  it('unauthenticated REGISTERs are challenged without a Redis key per challenge', async () => {
    const prefix = ts.ns.redisPrefix;
    const register = (i: number) =>
      sipRequest(sipPort, {
        method: 'REGISTER',
        uri: `sip:127.0.0.1:${sipPort}`,
        from: '<sip:nobody@127.0.0.1>',
        to: '<sip:nobody@127.0.0.1>',
        callId: `flood-${i}@carrier.invalid`,
        extra: ['Contact: <sip:nobody@127.0.0.2:5999>', 'Expires: 300'],
      });
    const one = register(-1);
    peer.send(one.text, sipPort);
    expect(statusOf((await peer.final(one.branch)) ?? '')).toBe(401);
    const before = (await ts.server.redis.keys(`${prefix}*`)).length;
    const flood = Array.from({ length: 200 }, (_, i) => register(i));
    const finals: (string | null)[] = [];
    // Batches, so the loopback socket buffers never overflow and every challenge is seen.
    for (let i = 0; i < flood.length; i += 20) {
      const batch = flood.slice(i, i + 20);
      for (const r of batch) peer.send(r.text, sipPort);
      finals.push(...(await Promise.all(batch.map((r) => peer.final(r.branch, 10_000)))));
    }
    expect(finals.map((f) => statusOf(f ?? ''))).toEqual(flood.map(() => 401));
    expect(finals[0]).toMatch(/^WWW-Authenticate: Digest .*nonce="[0-9a-f]+\.[0-9a-f]{32}"/im);
    expect((await ts.server.redis.keys(`${prefix}*`)).length).toBe(before);
    await expectOptionsAnswered();
  });
});

/**
 * A sipp call to a number whose markup is `<Dial action>` of `noun`; resolves with the Dial action's
 * parameters once the call is over.
 */
async function callThroughDial(
  path: string,
  noun: string,
  action: string,
): Promise<URLSearchParams | undefined> {
  hooks.script(path, xml(`<Dial action="${action}" timeout="5">${noun}</Dial>`));
  hooks.script(action, xml('<Hangup/>'));
  const number = await numberFor(path);
  const r = await runSipp({
    scenario: 'uac-call-expect-bye.xml',
    remote: `127.0.0.1:${sipPort}`,
    service: number,
    timeoutSeconds: 20,
  });
  expect(r.errors).toBe('');
  const [dialed] = await until(
    () => hooks.requestsTo(action).map((q) => new URLSearchParams(q.rawBody.toString())),
    (l) => l.length > 0,
  );
  return dialed;
}

describe('SIP target policy', () => {
  it('<Dial><Sip> to the metadata address: a failed child leg and Notification 13225', async () => {
    const dialed = await callThroughDial('/dial-meta', '<Sip>sip:x@169.254.169.254</Sip>', '/dialed');
    expect(dialed?.get('DialCallStatus'), dialed?.toString()).toBe('failed');
    expect(dialed?.get('DialSipResponseCode')).toBe('403');
    const children = await until(
      () => callsTo('sip:x@169.254.169.254'),
      (l) => l.length > 0 && l.every((c) => c.status === 'failed'),
    );
    expect(children).toHaveLength(1);
    expect(children[0]).toMatchObject({ status: 'failed', direction: 'outbound-dial' });
    const notes = await until(
      async () =>
        (await ts.request('GET', `${API}/Accounts/${owner.sid}/Notifications.json`, { auth: owner.creds }))
          .json.notifications as Array<{ error_code: number | string; message_text: string }>,
      (l) => l.some((n) => Number(n.error_code) === 13225),
    );
    expect(notes.find((n) => Number(n.error_code) === 13225)?.message_text).toMatch(/169\.254\.169\.254/);
  });

  it('<Dial><Number> through a multi-provider proxy in the metadata range fails the same way', async () => {
    const ext = await ts.request('POST', `${API}/ExtensionsConfiguration.json`, {
      form: {
        ExtensionName: 'multi_provider',
        Enabled: 'true',
        AccountSid: owner.sid,
        ConfigurationData: JSON.stringify({
          'outbound-voice': [{ proxy: [{ uri: 'sip:169.254.169.254:5060;transport=udp' }] }],
        }),
      },
    });
    expect(ext.status).toBe(201);
    try {
      const dialed = await callThroughDial('/dial-mp', '<Number>+15550999999</Number>', '/dialed-mp');
      expect(dialed?.get('DialCallStatus')).toBe('failed');
      expect(dialed?.get('DialSipResponseCode')).toBe('403');
      const notes = await until(
        async () =>
          (await ts.request('GET', `${API}/Accounts/${owner.sid}/Notifications.json`, { auth: owner.creds }))
            .json.notifications as Array<{ error_code: number | string; message_text: string }>,
        (l) => l.some((n) => Number(n.error_code) === 13225 && n.message_text.includes('+15550999999')),
      );
      expect(
        notes.some((n) => Number(n.error_code) === 13225 && n.message_text.includes('+15550999999')),
      ).toBe(true);
    } finally {
      await ts.request('DELETE', `${API}/ExtensionsConfiguration.json/${ext.json.sid}`);
    }
  });

  it.each([
    'sip:gw@169.254.169.254:5060',
    '169.254.169.254',
    '[fe80::1]:5060',
    'metadata.google.internal',
  ])('a gateway Proxy of %s is refused at write time (400 naming Proxy)', async (proxy) => {
    const r = await ts.request('POST', `${API}/Accounts/${ts.admin.sid}/Management/Gateways.json`, {
      form: { Proxy: proxy, FriendlyName: 'meta' },
    });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ status: 400, code: 21100 });
    expect(r.json.message).toMatch(/Proxy/);
    const list = await ts.request('GET', `${API}/Accounts/${ts.admin.sid}/Management/Gateways.json`);
    expect(JSON.stringify(list.json)).not.toContain(proxy);
  });

  it('a loopback gateway Proxy is allowed while SIP_BLOCK_PRIVATE is off', async () => {
    const r = await ts.request('POST', `${API}/Accounts/${ts.admin.sid}/Management/Gateways.json`, {
      form: { Proxy: '127.0.0.9:5999', FriendlyName: 'loopback' },
    });
    expect(r.status).toBe(201);
    await ts.request('DELETE', `${API}/Accounts/${ts.admin.sid}/Management/Gateways/${r.json.sid}.json`);
  });
});
