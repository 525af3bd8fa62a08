/**
 * SIP fuzzing against the running service: malformed INVITE/REGISTER/MESSAGE/BYE variants
 * (test/support/fuzz/sip.ts) over UDP and TCP, plus the RFC 4475 torture set over TCP. Every
 * message gets the answer its verdict calls for (a request that passes framing is answered; a
 * broken request without a usable Via, a response or garbage is dropped), the node keeps
 * answering OPTIONS on both transports, and no call is left live.
 *
 * Size: FUZZ_SCALE (default 1: a few seconds). Seed: FUZZ_SEED (default 1 at scale 1, else the
 * clock); every failure message names the seed and the case, so `FUZZ_SEED=<n>` replays it.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateRaw } from '../../../src/sip/validate.js';
import { statelessResponse } from '../../../src/sip/wire-response.js';
import { fuzzScale, fuzzSeed } from '../../support/fuzz/prng.js';
import { sipFuzzCases } from '../../support/fuzz/sip.js';
import { loadTorture, TORTURE_CASES } from '../../support/rfc4475.js';
import { API, startTestServer, type TestServer } from '../../support/server.js';
import { OFFER, SipPeer, sipRequest, statusOf, tcpExchange } from '../../support/sip-peer.js';
import { until, markup as xml } from '../../support/until.js';
import { startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';

const SCALE = fuzzScale();
const SEED = fuzzSeed(SCALE > 1 ? Date.now() % 2 ** 31 : 1);
const NUMBER = '+15550900001';

let ts: TestServer;
let hooks: WebhookServer;
let peer: SipPeer;
let port: number;
let account: { sid: string; creds: { user: string; secret: string } };

beforeAll(async () => {
  ts = await startTestServer({ label: 'fuzzsip' });
  hooks = await startWebhookServer();
  hooks.script('/busy', xml('<Reject reason="busy"/>'));
  peer = await SipPeer.open('127.0.0.2');
  peer.autoAck = true;
  port = ts.server.sip!.stack.port;
  const r = await ts.request('POST', `${API}/Accounts.json`, {
    form: { EmailAddress: 'fuzz@example.test', Password: 'password-123', Role: 'Developer' },
  });
  const creds = { user: r.json.sid, secret: r.json.auth_token };
  account = { sid: r.json.sid, creds };
  const n = await ts.request('POST', `${API}/Accounts/${r.json.sid}/IncomingPhoneNumbers.json`, {
    auth: creds,
    form: { PhoneNumber: NUMBER, VoiceUrl: `${hooks.origin}/busy` },
  });
  expect(n.status).toBe(201);
});
afterAll(async () => {
  peer?.close();
  await hooks?.close();
  await ts?.dispose();
});

/** What the node must do with `raw`: 'none', a given status, or 'any' final answer. */
function expectation(raw: string, datagram: boolean): 'none' | 'any' | number {
  const text = raw.replace(/^(?:\r\n)+/, '');
  const framed =
    datagram && !text.includes('\r\n\r\n') ? `${text}${text.endsWith('\r\n') ? '\r\n' : '\r\n\r\n'}` : text;
  const v = validateRaw(framed, datagram);
  if (v.kind === 'drop') return 'none';
  if (/^ACK /.test(text)) return 'none';
  if (v.kind === 'reject') return statelessResponse(framed, v.status, v.reason) ? v.status : 'none';
  return /^SIP\//.test(text) ? 'none' : 'any';
}

/** Answers in the inbox that belong to case `index` (or whose Call-ID the mutation destroyed). */
function answersFor(index: number): string[] {
  return peer.inbox.filter((m) => {
    const id = /fuzz-\d+-(\d+)@/.exec(m)?.[1];
    return id === undefined || Number(id) === index;
  });
}

async function expectOptions(transport: 'UDP' | 'TCP'): Promise<void> {
  const { text, branch } = sipRequest(port, {
    method: 'OPTIONS',
    via: `SIP/2.0/${transport} 127.0.0.2:5999`,
  });
  if (transport === 'UDP') {
    peer.send(text, port);
    expect(statusOf((await peer.final(branch)) ?? ''), `seed ${SEED}: OPTIONS over UDP`).toBe(200);
  } else {
    const got = await tcpExchange(Buffer.from(text, 'latin1'), port, 5_000);
    expect(statusOf(got), `seed ${SEED}: OPTIONS over TCP`).toBe(200);
  }
}

describe(`SIP fuzz (seed ${SEED}, scale ${SCALE})`, () => {
  it('UDP: every malformed message is answered or dropped by rule', async () => {
    const cases = sipFuzzCases(SEED, 48 * SCALE, { port, number: NUMBER, via: 'UDP 127.0.0.2:5999' });
    const counters = ts.server.sip!.stack.counters;
    for (const [i, c] of cases.entries()) {
      peer.inbox.length = 0;
      const dropped = counters.dropped;
      const want = expectation(c.bytes.toString('latin1'), true);
      peer.send(c.bytes, port);
      const end = Date.now() + (want === 'none' ? 150 : 5_000);
      let finals: number[] = [];
      while (Date.now() < end) {
        finals = answersFor(i)
          .map(statusOf)
          .filter((s) => s >= 200);
        if (want !== 'none' && (finals.length > 0 || counters.dropped > dropped)) break;
        await new Promise((r) => setTimeout(r, 5));
      }
      const label = `seed ${SEED} case ${c.name}`;
      if (want === 'none') expect(finals, label).toEqual([]);
      else if (want === 'any') expect(finals.length > 0 || counters.dropped > dropped, label).toBe(true);
      else expect(finals[0], label).toBe(want);
    }
    await expectOptions('UDP');
    await expectOptions('TCP');
    // And a well-formed call still goes through the whole call path (markup: Reject busy).
    const call = sipRequest(port, {
      method: 'INVITE',
      uri: `sip:${NUMBER}@127.0.0.1:${port}`,
      to: `<sip:${NUMBER}@127.0.0.1>`,
      body: OFFER,
    });
    peer.send(call.text, port);
    expect(statusOf((await peer.final(call.branch)) ?? ''), `seed ${SEED}: a clean call`).toBe(486);
  });

  it('TCP: malformed messages and the RFC 4475 set', async () => {
    const cases = [
      ...sipFuzzCases(SEED + 1, 24 * SCALE, { port, number: NUMBER, via: 'TCP 127.0.0.2:5999' }),
      ...TORTURE_CASES.map((t) => ({ name: `rfc4475 ${t.name}`, bytes: loadTorture(t.name), callId: '' })),
    ];
    for (const c of cases) {
      const text = c.bytes.toString('latin1').replace(/^(?:\r\n)+/, '');
      const end = text.indexOf('\r\n\r\n');
      const cl = /^(?:content-length|l)[ \t]*:[ \t]*(\d+)[ \t]*$/im.exec(text.slice(0, Math.max(end, 0)));
      // Only a message the framer cuts exactly as sent has one verdict to check.
      const clean = end >= 0 && Number(cl?.[1] ?? 0) === text.length - end - 4;
      const want = clean ? expectation(text, false) : 'none';
      const got = await tcpExchange(c.bytes, port, !clean || want === 'none' ? 200 : 5_000);
      if (!clean) continue;
      const finals = got
        .split(/(?=^SIP\/2\.0 )/m)
        .map(statusOf)
        .filter((s) => s >= 200);
      const label = `seed ${SEED + 1} case ${c.name}`;
      if (want === 'none') expect(finals, label).toEqual([]);
      else if (typeof want === 'number') expect(finals[0], label).toBe(want);
    }
    await expectOptions('TCP');
    await expectOptions('UDP');
  });

  it('no call is left live and no handler failed', async () => {
    const active = await until(
      () => ts.server.sip!.legs.active,
      (n) => n === 0,
      15_000,
    );
    expect(active, `seed ${SEED}: live SIP legs`).toBe(0);
    const calls = ts.server.sip!.stack.counters;
    expect(calls.handlerErrors, `seed ${SEED}: handler errors`).toBe(0);
    const all = await ts.request('GET', `${API}/Accounts/${account.sid}/Calls.json?PageSize=1000`, {
      auth: account.creds,
    });
    const live = (all.json.calls as Array<{ status: string }>).filter((c) =>
      ['queued', 'ringing', 'in-progress'].includes(c.status),
    );
    expect(live, `seed ${SEED}: live calls`).toEqual([]);
    // The call path was reached (at least the clean call) and every call has ended.
    expect(all.json.calls.length, `seed ${SEED}: calls made`).toBeGreaterThan(0);
  });
});
