import twilio from 'twilio';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  FailureKind,
  type Params,
  verifySwitchboardSignature,
  WebhookClient,
  type WebhookClientOptions,
  WebhookErrorCode,
  type WebhookNotification,
} from '../../../src/webhooks/index.js';
import { closedPort, startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';

const TOKEN = 'auth-token-123';
const ACCOUNT = 'AC00000000000000000000000000000001';
const PARAMS: Params = [
  ['CallSid', 'CA0123'],
  ['From', '+1 555 0100'],
  ['To', 'client:alice'],
  ['Body', 'héllo & goodbye+more'],
  ['Tag', 'b'],
  ['Tag', 'a'],
];

function recordOf(raw: string): Record<string, string | string[]> {
  const rec: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(raw)) {
    const cur = rec[k];
    if (cur === undefined) rec[k] = v;
    else if (Array.isArray(cur)) cur.push(v);
    else rec[k] = [cur, v];
  }
  return rec;
}

let server: WebhookServer;
const clients: WebhookClient[] = [];
function client(opts: WebhookClientOptions = {}): { c: WebhookClient; notes: WebhookNotification[] } {
  const notes: WebhookNotification[] = [];
  const c = new WebhookClient({ onFailure: (n) => notes.push(n), ...opts });
  clients.push(c);
  return { c, notes };
}

beforeAll(async () => {
  server = await startWebhookServer();
});
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
  server.requests.length = 0;
});
afterAll(async () => {
  await server.close();
});

describe('WebhookClient against a live HTTP server', () => {
  it('POSTs the form once-serialised and signed (twilio validator accepts the received request)', async () => {
    server.script('/voice', { status: 200, body: '<Response><Hangup/></Response>' });
    const { c, notes } = client();
    const res = await c.request({
      url: `${server.origin}/voice?app=1`,
      method: 'POST',
      params: PARAMS,
      accountSid: ACCOUNT,
      authToken: TOKEN,
      idempotencyToken: 'idem-1',
    });
    expect(res.ok).toBe(true);
    if (!res.ok) return;
    expect(res.status).toBe(200);
    expect(res.body).toBe('<Response><Hangup/></Response>');
    expect(res.attempts).toBe(1);
    expect(res.usedFallback).toBe(false);
    expect(notes).toEqual([]);
    const [got] = server.requestsTo('/voice');
    expect(got?.method).toBe('POST');
    expect(got?.headers['content-type']).toBe('application/x-www-form-urlencoded; charset=utf-8');
    expect(got?.headers['i-twilio-idempotency-token']).toBe('idem-1');
    expect(got?.headers['x-switchboard-idempotency-token']).toBe('idem-1');
    const raw = got!.rawBody.toString('utf8');
    // Order and repeats preserved on the wire.
    expect([...new URLSearchParams(raw)]).toEqual(PARAMS);
    const fullUrl = `${server.origin}${got!.url}`;
    const sig = String(got!.headers['x-twilio-signature']);
    expect(twilio.validateRequest(TOKEN, sig, fullUrl, recordOf(raw))).toBe(true);
    expect(twilio.validateRequest('wrong', sig, fullUrl, recordOf(raw))).toBe(false);
    expect(
      verifySwitchboardSignature(String(got!.headers['x-switchboard-signature']), got!.rawBody, TOKEN),
    ).toBe(true);
  });

  it('GET carries the params in the query and signs the full URL; the fragment is neither sent nor signed', async () => {
    server.script('/get', { status: 200, body: 'ok' });
    const { c } = client();
    const res = await c.request({
      url: `${server.origin}/get?x=1#ct=1000&tt=2000`,
      method: 'GET',
      params: PARAMS,
      accountSid: ACCOUNT,
      authToken: TOKEN,
    });
    expect(res.ok).toBe(true);
    const [got] = server.requestsTo('/get');
    expect(got?.url.startsWith('/get?x=1&CallSid=CA0123')).toBe(true);
    expect(got?.url.includes('#')).toBe(false);
    expect(got?.rawBody.length).toBe(0);
    const fullUrl = `${server.origin}${got!.url}`;
    expect(twilio.validateRequest(TOKEN, String(got!.headers['x-twilio-signature']), fullUrl, {})).toBe(true);
    expect(verifySwitchboardSignature(String(got!.headers['x-switchboard-signature']), fullUrl, TOKEN)).toBe(
      true,
    );
    expect(res.url).toBe(fullUrl);
  });

  it('connection refused → retried once with the same token → fallback used → notifications', async () => {
    const dead = await closedPort();
    server.script('/fallback', { status: 200, body: '<Response/>' });
    const { c, notes } = client();
    const started = Date.now();
    const res = await c.request({
      url: `http://127.0.0.1:${dead}/voice`,
      method: 'POST',
      params: PARAMS,
      accountSid: ACCOUNT,
      authToken: TOKEN,
      idempotencyToken: 'idem-refused',
      fallback: { url: `${server.origin}/fallback`, method: 'POST' },
      context: { callSid: 'CA0123' },
    });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(res.ok).toBe(true);
    expect(res.usedFallback).toBe(true);
    expect(res.attempts).toBe(3);
    expect(notes.map((n) => [n.kind, n.errorCode, n.attempt, n.next, n.log])).toEqual([
      [FailureKind.Refused, WebhookErrorCode.ConnectionFailure, 1, 'retry', 1],
      [FailureKind.Refused, WebhookErrorCode.ConnectionFailure, 2, 'fallback', 1],
    ]);
    for (const n of notes) {
      expect(n.idempotencyToken).toBe('idem-refused');
      expect(n.requestUrl).toBe(`http://127.0.0.1:${dead}/voice`);
      expect(n.requestMethod).toBe('POST');
      expect(n.requestVariables).toContain('CallSid=CA0123');
      expect(n.accountSid).toBe(ACCOUNT);
      expect(n.context).toEqual({ callSid: 'CA0123' });
    }
    const [fb] = server.requestsTo('/fallback');
    expect(fb?.headers['i-twilio-idempotency-token']).toBe('idem-refused');
    // R10: the fallback request follows the last primary failure at once (well under ct + 50 ms).
    expect(fb!.at - notes[1]!.at.getTime()).toBeLessThan(50);
  });

  it('retries carry the same idempotency token and a fresh signature (connection reset before a response)', async () => {
    server.script('/flaky', { destroy: true }, { status: 200, body: 'ok' });
    let clock = 1_700_000_000_000;
    // Each clock read advances 1 s so the two attempts get different signature timestamps.
    const now = () => {
      clock += 1000;
      return clock;
    };
    const { c, notes } = client({ now });
    const res = await c.request({
      url: `${server.origin}/flaky`,
      method: 'POST',
      params: PARAMS,
      accountSid: ACCOUNT,
      authToken: TOKEN,
    });
    expect(res.ok).toBe(true);
    expect(res.attempts).toBe(2);
    expect(notes.map((n) => n.kind)).toEqual([FailureKind.Network]);
    const reqs = server.requestsTo('/flaky');
    expect(reqs).toHaveLength(2);
    const tokens = reqs.map((r) => r.headers['i-twilio-idempotency-token']);
    expect(tokens[0]).toBe(tokens[1]);
    expect(tokens[0]).toBe(res.idempotencyToken);
    const sigs = reqs.map((r) => r.headers['x-switchboard-signature']);
    expect(sigs[0]).not.toBe(sigs[1]);
  });

  it('a server that accepts but never answers hits the total timeout from the URL fragment', async () => {
    server.script('/hang', { hang: true });
    server.script('/fb', { status: 200, body: 'fallback' });
    const { c, notes } = client();
    const started = Date.now();
    const res = await c.request({
      url: `${server.origin}/hang#tt=300`,
      method: 'POST',
      params: PARAMS,
      accountSid: ACCOUNT,
      authToken: TOKEN,
      fallback: { url: `${server.origin}/fb`, method: 'POST' },
    });
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(1500);
    expect(res.ok).toBe(true);
    expect(res.usedFallback).toBe(true);
    // Timeouts are not retried by default (only connection failures are).
    expect(server.requestsTo('/hang')).toHaveLength(1);
    expect(notes.map((n) => [n.kind, n.errorCode, n.next])).toEqual([
      [FailureKind.Timeout, WebhookErrorCode.RetrievalFailure, 'fallback'],
    ]);
  });

  it('read timeout (rt) fires when the server stalls, and rp=rt retries it within tt', async () => {
    server.script('/slow', { delayMs: 2000, body: 'late' });
    const { c, notes } = client();
    const started = Date.now();
    const res = await c.request({
      url: `${server.origin}/slow#rt=200&tt=1000&rp=rt&rc=1`,
      method: 'POST',
      params: PARAMS,
      accountSid: ACCOUNT,
      authToken: TOKEN,
    });
    expect(Date.now() - started).toBeLessThan(1500);
    expect(res.ok).toBe(false);
    if (res.ok) return;
    expect(res.kind).toBe(FailureKind.Timeout);
    expect(res.attempts).toBe(2);
    expect(notes.map((n) => n.next)).toEqual(['retry', 'none']);
    expect(notes[1]?.log).toBe(0);
  });

  it('connect timeout (ct) is separate from the total timeout and covers name resolution + TCP connect', async () => {
    // Loopback-only rule: no unroutable address is dialled. A resolver that never answers keeps the
    // socket in its connecting phase, which is exactly what the connect timer guards.
    const { c, notes } = client({ resolver: () => new Promise(() => {}) });
    const started = Date.now();
    const res = await c.request({
      url: 'http://stalled-dns.test/x#ct=200&tt=5000&rc=1',
      method: 'POST',
      params: PARAMS,
      accountSid: ACCOUNT,
      authToken: TOKEN,
    });
    const elapsed = Date.now() - started;
    expect(res.ok).toBe(false);
    if (res.ok) return;
    expect(res.kind).toBe(FailureKind.ConnectTimeout);
    // Two attempts of ~200 ms each (connect failures are retried), far below the 5 s total.
    expect(res.attempts).toBe(2);
    expect(elapsed).toBeGreaterThanOrEqual(390);
    expect(elapsed).toBeLessThan(1500);
    expect(notes.map((n) => [n.errorCode, n.next])).toEqual([
      [WebhookErrorCode.ConnectionFailure, 'retry'],
      [WebhookErrorCode.ConnectionFailure, 'none'],
    ]);
  });

  it('500 → no retry by default → fallback, with the response captured in the notification', async () => {
    server.script('/err', { status: 500, body: 'boom', headers: { 'X-Trace': 't1' } });
    server.script('/fb2', { status: 200, body: 'fb' });
    const { c, notes } = client();
    const res = await c.request({
      url: `${server.origin}/err`,
      method: 'POST',
      params: PARAMS,
      accountSid: ACCOUNT,
      authToken: TOKEN,
      fallback: { url: `${server.origin}/fb2`, method: 'GET' },
    });
    expect(res.ok).toBe(true);
    if (!res.ok) return;
    expect(res.body).toBe('fb');
    expect(res.method).toBe('GET');
    expect(res.usedFallback).toBe(true);
    expect(server.requestsTo('/err')).toHaveLength(1);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({
      kind: FailureKind.HttpStatus,
      errorCode: 11200,
      responseStatus: 500,
      responseBody: 'boom',
      next: 'fallback',
    });
    expect(notes[0]?.responseHeaders['x-trace']).toBe('t1');
  });

  it('both primary and fallback failing returns the fallback failure', async () => {
    server.script('/e1', { status: 503 });
    server.script('/e2', { status: 404, body: 'nope' });
    const { c, notes } = client();
    const res = await c.request({
      url: `${server.origin}/e1`,
      method: 'POST',
      params: [],
      accountSid: ACCOUNT,
      authToken: TOKEN,
      fallback: { url: `${server.origin}/e2`, method: 'POST' },
    });
    expect(res.ok).toBe(false);
    if (res.ok) return;
    expect(res.status).toBe(404);
    expect(res.usedFallback).toBe(true);
    expect(res.attempts).toBe(2);
    expect(notes.map((n) => [n.responseStatus, n.next, n.log])).toEqual([
      [503, 'fallback', 1],
      [404, 'none', 0],
    ]);
  });

  it('caps an oversized body (streamed, no content-length) and reports too-large', async () => {
    server.script('/big', { streamBytes: 300_000 });
    const { c, notes } = client({ maxBodyBytes: 64 * 1024 });
    const res = await c.request({
      url: `${server.origin}/big`,
      method: 'GET',
      params: [],
      accountSid: ACCOUNT,
      authToken: TOKEN,
    });
    expect(res.ok).toBe(false);
    if (res.ok) return;
    expect(res.kind).toBe(FailureKind.TooLarge);
    expect(res.errorCode).toBe(WebhookErrorCode.BodyTooLarge);
    expect((res.body ?? '').length).toBeLessThanOrEqual(64 * 1024);
    expect(notes).toHaveLength(1);
  });

  it('refuses a declared oversized body without reading it', async () => {
    server.script('/declared', { body: 'x'.repeat(5000) });
    const { c } = client({ maxBodyBytes: 1000 });
    const res = await c.request({
      url: `${server.origin}/declared`,
      method: 'GET',
      params: [],
      accountSid: ACCOUNT,
      authToken: TOKEN,
    });
    expect(res.ok).toBe(false);
    if (!res.ok) expect(res.kind).toBe(FailureKind.TooLarge);
  });

  it('refuses link-local and metadata targets without connecting, whatever blockPrivate says', async () => {
    const { c, notes } = client();
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://[fe80::1]/x',
      'http://[::ffff:169.254.169.254]/x',
      'http://metadata.google.internal/',
    ]) {
      const res = await c.request({ url, method: 'GET', params: [], accountSid: ACCOUNT, authToken: TOKEN });
      expect(res.ok).toBe(false);
      if (!res.ok) {
        expect(res.kind).toBe(FailureKind.BlockedByPolicy);
        expect(res.errorCode).toBe(WebhookErrorCode.BadHost);
        expect(res.attempts).toBe(1);
      }
    }
    expect(notes).toHaveLength(4);
  });

  it('checks host names after DNS: any blocked address refuses the URL; the checked address is the one used', async () => {
    const resolved: Record<string, Array<{ address: string; family: number }>> = {
      'evil.test': [
        { address: '127.0.0.1', family: 4 },
        { address: '169.254.169.254', family: 4 },
      ],
      'hooks.test': [{ address: '127.0.0.1', family: 4 }],
    };
    const { c } = client({ resolver: async (h) => resolved[h] ?? [] });
    const evil = await c.request({
      url: `http://evil.test:${server.port}/voice`,
      method: 'GET',
      params: [],
      accountSid: ACCOUNT,
      authToken: TOKEN,
    });
    expect(evil.ok).toBe(false);
    if (!evil.ok) expect(evil.kind).toBe(FailureKind.BlockedByPolicy);
    server.script('/pinned', { status: 200, body: 'pinned' });
    const ok = await c.request({
      url: `http://hooks.test:${server.port}/pinned`,
      method: 'GET',
      params: [],
      accountSid: ACCOUNT,
      authToken: TOKEN,
    });
    expect(ok.ok).toBe(true);
    expect(server.requestsTo('/pinned')[0]?.headers.host).toBe(`hooks.test:${server.port}`);
    const missing = await c.request({
      url: 'http://missing.test/x',
      method: 'GET',
      params: [],
      accountSid: ACCOUNT,
      authToken: TOKEN,
      timeouts: { totalMs: 500 },
    });
    expect(missing.ok).toBe(false);
    if (!missing.ok) expect(missing.kind).toBe(FailureKind.BadHost);
  });

  it('loopback is allowed by default and refused with blockPrivate', async () => {
    server.script('/loop', { status: 200, body: 'ok' });
    const open = client().c;
    const strict = client({ blockPrivate: true }).c;
    const req = {
      url: `${server.origin}/loop`,
      method: 'GET' as const,
      params: [],
      accountSid: ACCOUNT,
      authToken: TOKEN,
    };
    expect((await open.request(req)).ok).toBe(true);
    const refused = await strict.request(req);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.kind).toBe(FailureKind.BlockedByPolicy);
    const viaDns = client({
      blockPrivate: true,
      resolver: async () => [{ address: '10.0.0.5', family: 4 }],
    }).c;
    const r2 = await viaDns.request({ ...req, url: 'http://internal.test/x' });
    expect(r2.ok).toBe(false);
    if (!r2.ok) expect(r2.kind).toBe(FailureKind.BlockedByPolicy);
    expect(server.requestsTo('/loop')).toHaveLength(1);
  });

  it('follows up to 5 policy-checked, re-signed redirects; 303 becomes GET with the params in the query', async () => {
    server.script('/r1', { status: 307, headers: { Location: '/r2' } });
    server.script('/r2', { status: 303, headers: { Location: '/r3' } });
    server.script('/r3', { status: 200, body: 'done' });
    const { c } = client();
    const res = await c.request({
      url: `${server.origin}/r1`,
      method: 'POST',
      params: PARAMS,
      accountSid: ACCOUNT,
      authToken: TOKEN,
    });
    expect(res.ok).toBe(true);
    expect(server.requestsTo('/r2')[0]?.method).toBe('POST');
    const last = server.requestsTo('/r3')[0]!;
    expect(last.method).toBe('GET');
    expect(
      twilio.validateRequest(
        TOKEN,
        String(last.headers['x-twilio-signature']),
        `${server.origin}${last.url}`,
        {},
      ),
    ).toBe(true);

    server.script('/loop-redirect', { status: 302, headers: { Location: '/loop-redirect' } });
    const looped = await c.request({
      url: `${server.origin}/loop-redirect`,
      method: 'GET',
      params: [],
      accountSid: ACCOUNT,
      authToken: TOKEN,
    });
    expect(looped.ok).toBe(false);
    if (!looped.ok) expect(looped.errorCode).toBe(WebhookErrorCode.TooManyRedirects);
    expect(server.requestsTo('/loop-redirect')).toHaveLength(6);

    server.script('/to-metadata', { status: 302, headers: { Location: 'http://169.254.169.254/latest' } });
    const ssrf = await c.request({
      url: `${server.origin}/to-metadata`,
      method: 'GET',
      params: [],
      accountSid: ACCOUNT,
      authToken: TOKEN,
    });
    expect(ssrf.ok).toBe(false);
    if (!ssrf.ok) expect(ssrf.kind).toBe(FailureKind.BlockedByPolicy);
  });

  it('a redirect to a host name is resolved and checked like the first hop (every connection goes through the policy)', async () => {
    const looked: string[] = [];
    const resolved: Record<string, Array<{ address: string; family: number }>> = {
      'hooks.test': [{ address: '127.0.0.1', family: 4 }],
      'rebind.test': [{ address: '169.254.169.254', family: 4 }],
    };
    const { c, notes } = client({
      resolver: async (h) => {
        looked.push(h);
        return resolved[h] ?? [];
      },
    });
    server.script('/hop', {
      status: 302,
      headers: { Location: `http://rebind.test:${server.port}/landing` },
    });
    server.script('/landing', { status: 200, body: 'should not be reached' });
    const res = await c.request({
      url: `http://hooks.test:${server.port}/hop`,
      method: 'GET',
      params: [],
      accountSid: ACCOUNT,
      authToken: TOKEN,
    });
    expect(res.ok).toBe(false);
    if (!res.ok) {
      expect(res.kind).toBe(FailureKind.BlockedByPolicy);
      expect(res.url).toBe(`http://rebind.test:${server.port}/landing`);
    }
    expect(looked).toEqual(['hooks.test', 'rebind.test']);
    expect(server.requestsTo('/hop')).toHaveLength(1);
    expect(server.requestsTo('/landing')).toHaveLength(0);
    expect(notes.map((n) => n.kind)).toEqual([FailureKind.BlockedByPolicy]);
  });

  it('keeps connections alive: consecutive requests to one origin reuse pooled sockets', async () => {
    server.script('/ka', { status: 200, body: 'ok' });
    const { c } = client();
    for (let i = 0; i < 6; i++) {
      const res = await c.request({
        url: `${server.origin}/ka`,
        method: i % 2 ? 'GET' : 'POST',
        params: PARAMS,
        accountSid: ACCOUNT,
        authToken: TOKEN,
      });
      expect(res.ok).toBe(true);
    }
    const ports = new Set(server.requestsTo('/ka').map((r) => r.remotePort));
    // undici may open a second socket when a request arrives before the first socket reports itself
    // free again; never one per request.
    expect(ports.size).toBeLessThanOrEqual(2);
  });

  it('an invalid URL is a typed failure and a notification, not a throw', async () => {
    const { c, notes } = client();
    const res = await c.request({
      url: 'gopher://x',
      method: 'GET',
      params: [],
      accountSid: ACCOUNT,
      authToken: TOKEN,
    });
    expect(res.ok).toBe(false);
    if (!res.ok) {
      expect(res.kind).toBe(FailureKind.InvalidUrl);
      expect(res.errorCode).toBe(11100);
    }
    expect(notes).toHaveLength(1);
  });

  it('a response cut off mid-body is a network failure, not a hang, and is not retried', async () => {
    server.script('/cut', { abortAfterBytes: 100 });
    const { c, notes } = client();
    const started = Date.now();
    const res = await c.request({
      url: `${server.origin}/cut`,
      method: 'GET',
      params: [],
      accountSid: ACCOUNT,
      authToken: TOKEN,
    });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(res.ok).toBe(false);
    if (!res.ok) {
      expect(res.kind).toBe(FailureKind.Network);
      expect(res.status).toBe(200);
      expect(res.attempts).toBe(1);
    }
    expect(notes).toHaveLength(1);
  });

  it('close() ends requests in flight without retry or fallback, and later requests fail fast', async () => {
    server.script('/hold', { hang: true });
    server.script('/never', { status: 200 });
    const { c } = client();
    const pending = c.request({
      url: `${server.origin}/hold`,
      method: 'POST',
      params: PARAMS,
      accountSid: ACCOUNT,
      authToken: TOKEN,
      fallback: { url: `${server.origin}/never`, method: 'POST' },
    });
    await new Promise((r) => setTimeout(r, 100));
    c.close();
    c.close();
    const res = await pending;
    expect(res.ok).toBe(false);
    if (!res.ok) {
      expect(res.kind).toBe(FailureKind.Network);
      expect(res.usedFallback).toBe(false);
      expect(res.attempts).toBe(1);
    }
    expect(server.requestsTo('/never')).toHaveLength(0);
    const after = await c.request({
      url: `${server.origin}/never`,
      method: 'GET',
      params: [],
      accountSid: ACCOUNT,
      authToken: TOKEN,
    });
    expect(after.ok).toBe(false);
    expect(server.requestsTo('/never')).toHaveLength(0);
  });

  it('URL credentials are sent as Basic auth but never appear in notifications', async () => {
    server.script('/auth', { status: 401, body: 'who?' });
    const { c, notes } = client();
    const res = await c.request({
      url: `http://user:s3cret@127.0.0.1:${server.port}/auth`,
      method: 'POST',
      params: PARAMS,
      accountSid: ACCOUNT,
      authToken: TOKEN,
    });
    expect(res.ok).toBe(false);
    const [got] = server.requestsTo('/auth');
    expect(got?.headers.authorization).toBe(`Basic ${Buffer.from('user:s3cret').toString('base64')}`);
    expect(notes).toHaveLength(1);
    expect(JSON.stringify(notes[0])).not.toContain('s3cret');
    expect(notes[0]?.requestUrl).toBe(`http://127.0.0.1:${server.port}/auth`);
    // The signature covers the URL as the receiver sees it (no credentials).
    const sig = String(got!.headers['x-twilio-signature']);
    expect(
      twilio.validateRequest(TOKEN, sig, `${server.origin}/auth`, recordOf(got!.rawBody.toString())),
    ).toBe(true);
  });
});
