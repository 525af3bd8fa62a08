/**
 * What the webhook client keeps between requests (each target's parsed URL and request parts, the
 * pre-connection verdict per host, the HMAC key per AuthToken) and the one timer per exchange, against
 * live HTTP servers on loopback.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import twilio from 'twilio';
import { afterEach, describe, expect, it } from 'vitest';
import {
  FailureKind,
  type Params,
  verifySwitchboardSignature,
  WebhookClient,
  type WebhookClientOptions,
} from '../../../src/webhooks/index.js';

const ACCOUNT = 'AC00000000000000000000000000000001';
const PARAMS: Params = [
  ['CallSid', 'CA0123'],
  ['From', '+1 555 0100'],
];

const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

function client(opts: WebhookClientOptions = {}): WebhookClient {
  const c = new WebhookClient(opts);
  closers.push(() => c.close());
  return c;
}

interface Received {
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A server that hands each request, its body read, to `answer`. */
async function serve(answer: (res: ServerResponse) => void): Promise<{ origin: string; got: Received[] }> {
  const got: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      answer(res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, got };
}

/** Sends the head, then `chunks` pieces of body `everyMs` apart. */
function trickle(chunks: number, everyMs: number) {
  return (res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.flushHeaders();
    let sent = 0;
    const timer = setInterval(() => {
      sent += 1;
      if (sent < chunks) res.write(`${sent},`);
      else {
        clearInterval(timer);
        res.end(`${sent}`);
      }
    }, everyMs);
    res.on('close', () => clearInterval(timer));
  };
}

describe('WebhookClient: one timer per exchange', () => {
  it('response bytes move the read deadline: a body trickling in faster than rt completes', async () => {
    // Five pieces 80 ms apart: 400 ms in all, twice the read timeout, each gap well inside it.
    const { origin } = await serve(trickle(5, 80));
    const res = await client().request({
      url: `${origin}/slow#rt=200&tt=3000`,
      method: 'POST',
      params: PARAMS,
      accountSid: ACCOUNT,
      authToken: 'token',
    });
    expect(res.ok).toBe(true);
    if (res.ok) expect(res.body).toBe('1,2,3,4,5');
  });

  it('a gap longer than rt after response bytes fails as a read timeout', async () => {
    const { origin } = await serve(trickle(3, 400));
    const started = Date.now();
    const res = await client().request({
      url: `${origin}/gap#rt=150&tt=5000&rc=0`,
      method: 'POST',
      params: PARAMS,
      accountSid: ACCOUNT,
      authToken: 'token',
    });
    expect(res.ok).toBe(false);
    if (res.ok) return;
    expect(res.kind).toBe(FailureKind.Timeout);
    expect(res.message).toBe('no data for 150 ms');
    expect(res.status).toBe(200);
    // The head came at once; the first piece would come at ~400 ms, 150 ms of silence before it fail.
    expect(Date.now() - started).toBeLessThan(400);
  });

  it('a read timeout shorter than the connect timeout fires at rt once connected, not at ct', async () => {
    const { origin } = await serve(() => {}); // reads the request, never answers
    const started = Date.now();
    const res = await client({ connectTimeoutMs: 5_000 }).request({
      url: `${origin}/never#rt=150&tt=10000&rc=0`,
      method: 'POST',
      params: PARAMS,
      accountSid: ACCOUNT,
      authToken: 'token',
    });
    const elapsed = Date.now() - started;
    expect(res.ok).toBe(false);
    if (res.ok) return;
    expect(res.kind).toBe(FailureKind.Timeout);
    expect(res.message).toBe('no data for 150 ms');
    expect(elapsed).toBeGreaterThanOrEqual(140);
    expect(elapsed).toBeLessThan(1_000);
  });

  it('the total timeout wins over a read timeout that would come later', async () => {
    const { origin } = await serve(trickle(10, 100));
    const res = await client().request({
      url: `${origin}/long#rt=300&tt=350&rc=0`,
      method: 'POST',
      params: PARAMS,
      accountSid: ACCOUNT,
      authToken: 'token',
    });
    expect(res.ok).toBe(false);
    // The budget is what remains of tt when the attempt starts (a millisecond may have passed).
    if (!res.ok) expect(res.message).toMatch(/^no complete response within 3[45]\d ms$/);
  });
});

describe('WebhookClient: what it keeps between requests', () => {
  it('a changed AuthToken signs the next request to the same URL with the new key at once', async () => {
    const { origin, got } = await serve((res) => res.end('ok'));
    const c = client();
    const url = `${origin}/status?x=1`;
    for (const authToken of ['old-token', 'new-token', 'old-token']) {
      const res = await c.request({ url, method: 'POST', params: PARAMS, accountSid: ACCOUNT, authToken });
      expect(res.ok).toBe(true);
    }
    expect(got).toHaveLength(3);
    const form = Object.fromEntries(PARAMS);
    for (const [i, token, other] of [
      [0, 'old-token', 'new-token'],
      [1, 'new-token', 'old-token'],
      [2, 'old-token', 'new-token'],
    ] as const) {
      const r = got[i]!;
      const twilioSig = String(r.headers['x-twilio-signature']);
      const switchboardSig = String(r.headers['x-switchboard-signature']);
      expect(twilio.validateRequest(token, twilioSig, `${origin}${r.url}`, form)).toBe(true);
      expect(twilio.validateRequest(other, twilioSig, `${origin}${r.url}`, form)).toBe(false);
      expect(verifySwitchboardSignature(switchboardSig, r.body, token)).toBe(true);
      expect(verifySwitchboardSignature(switchboardSig, r.body, other)).toBe(false);
    }
  });

  it('a refused host is refused on every request, and the verdict follows each client’s policy', async () => {
    const { origin, got } = await serve((res) => res.end('ok'));
    const open = client();
    const strict = client({ blockPrivate: true });
    const ask = (c: WebhookClient, url: string) =>
      c.request({ url, method: 'GET', params: [], accountSid: ACCOUNT, authToken: 'token' });
    for (let i = 0; i < 2; i++) {
      for (const url of ['http://metadata.google.internal/x', 'http://169.254.169.254/y']) {
        for (const c of [open, strict]) {
          const res = await ask(c, url);
          expect(res.ok ? null : res.kind).toBe(FailureKind.BlockedByPolicy);
        }
      }
      // Loopback: allowed by default, refused with blockPrivate, each time.
      expect((await ask(open, `${origin}/a`)).ok).toBe(true);
      const refused = await ask(strict, `${origin}/a`);
      expect(refused.ok ? null : refused.kind).toBe(FailureKind.BlockedByPolicy);
    }
    expect(got).toHaveLength(2);
  });

  it('requests to one URL with and without per-request timeouts carry the same bytes to the same place', async () => {
    const { origin, got } = await serve((res) => res.end('ok'));
    const c = client();
    const base = { method: 'POST', params: PARAMS, accountSid: ACCOUNT, authToken: 'token' } as const;
    const url = `${origin}/same?q=1#rt=1000`;
    expect((await c.request({ ...base, url })).ok).toBe(true);
    expect((await c.request({ ...base, url, timeouts: { totalMs: 5_000 } })).ok).toBe(true);
    expect((await c.request({ ...base, url })).ok).toBe(true);
    expect(got.map((r) => r.url)).toEqual(['/same?q=1', '/same?q=1', '/same?q=1']);
    expect(new Set(got.map((r) => r.body.toString()))).toEqual(
      new Set(['CallSid=CA0123&From=%2B1+555+0100']),
    );
  });
});
