/**
 * B2BUA smoke test through the SIP port, with sipp on both sides: sipp UAC → our UAS leg, our UAC
 * leg → sipp UAS. ACK, BYE (either side) and CANCEL/487 must be right on both dialogs, and every leg
 * gets exactly one terminal event. The bridge below is what the call actors do with the same port.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SipEvent } from '../../../src/sip/port.js';
import { TERMINAL_SIP_EVENTS } from '../../../src/sip/port.js';
import type { SipService } from '../../../src/sip/service.js';
import { startTestServer, type TestServer } from '../../support/server.js';
import { startSipp } from '../../support/sipp.js';

let ts: TestServer;
let sip: SipService;
const events: SipEvent[] = [];
/** Where the bridge sends the B leg of the next call. */
let calleeUri = '';
const pairs = new Map<string, string>();

function bridge(s: SipService): void {
  s.legs.onEvent((e) => {
    events.push(e);
    if (!('legId' in e)) return;
    const other = pairs.get(e.legId);
    if (!other) return;
    const isB = other.startsWith('A:');
    const peer = other.slice(2);
    switch (e.type) {
      case 'sip.ringing':
        if (isB) s.legs.sendProvisional(peer, 180);
        break;
      case 'sip.answered':
        if (isB) s.legs.answer(peer, e.sdp ?? '');
        break;
      case 'sip.failed':
        if (isB) s.legs.reject(peer, e.status);
        break;
      case 'sip.cancel':
        s.legs.cancel(peer);
        break;
      case 'sip.bye':
        s.legs.hangUp(peer);
        break;
    }
  });
  s.legs.onInvite((invite) => {
    const bLeg = `B-${invite.legId}`;
    pairs.set(invite.legId, `B:${bLeg}`);
    pairs.set(bLeg, `A:${invite.legId}`);
    s.legs.placeCall(bLeg, {
      requestUri: calleeUri,
      from: invite.from,
      to: { uri: calleeUri },
      ...(invite.sdp ? { sdp: invite.sdp } : {}),
    });
  });
}

beforeAll(async () => {
  ts = await startTestServer({ label: 'b2bua' });
  sip = ts.server.sip!;
  bridge(sip);
});
afterAll(async () => {
  await ts?.dispose();
});

const terminalsOf = (legId: string) =>
  events.filter((e) => 'legId' in e && e.legId === legId && TERMINAL_SIP_EVENTS.has(e.type));

async function call(uacScenario: string, uasScenario: string, transport: 'u1' | 't1' = 'u1') {
  events.length = 0;
  const uas = await startSipp({ scenario: uasScenario, localIp: '127.0.0.3', transport });
  calleeUri = `sip:callee@127.0.0.3:${uas.localPort}${transport === 't1' ? ';transport=tcp' : ''}`;
  const uac = await startSipp({
    scenario: uacScenario,
    remote: `127.0.0.1:${sip.stack.port}`,
    service: 'callee',
    transport,
  });
  const [a, b] = await Promise.all([uac.done, uas.done]);
  return { uac: a, uas: b };
}

async function settled(): Promise<void> {
  // Let the last BYE/200 exchange finish on our side.
  const end = Date.now() + 3000;
  while (Date.now() < end) {
    const legs = new Set(events.filter((e) => 'legId' in e).map((e) => (e as { legId: string }).legId));
    if ([...legs].every((l) => terminalsOf(l).length >= 1) && legs.size >= 2) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.each([
  ['UDP', 'u1'],
  ['TCP', 't1'],
] as const)('B2BUA over %s', (_name, transport) => {
  it('caller hangs up: INVITE/180/200/ACK on both legs, BYE propagated A → B', async () => {
    const r = await call('sn:uac', 'sn:uas', transport);
    expect(r.uac.errors + r.uas.errors, r.uac.errors + r.uas.errors).toBe('');
    expect(r.uac.code).toBe(0);
    expect(r.uas.code).toBe(0);
    await settled();
    const answered = events.find((e) => e.type === 'sip.answered');
    expect(answered).toBeDefined();
    expect(events.some((e) => e.type === 'sip.confirmed')).toBe(true);
    const legs = [...pairs.keys()].filter((l) => events.some((e) => 'legId' in e && e.legId === l));
    expect(legs).toHaveLength(2);
    for (const l of legs) expect(terminalsOf(l)).toHaveLength(1);
    expect(events.filter((e) => e.type === 'sip.bye')).toHaveLength(1);
  });

  it('callee hangs up: BYE propagated B → A', async () => {
    const r = await call('uac-call-expect-bye.xml', 'uas-answer-then-bye.xml', transport);
    expect(r.uac.errors + r.uas.errors, r.uac.errors + r.uas.errors).toBe('');
    expect(r.uac.code).toBe(0);
    expect(r.uas.code).toBe(0);
    await settled();
    const byes = events.filter((e) => e.type === 'sip.bye');
    expect(byes).toHaveLength(1);
    expect((byes[0] as { legId: string }).legId.startsWith('B-')).toBe(true);
  });

  it('caller cancels while ringing: 200/487/ACK towards A, CANCEL/487/ACK towards B', async () => {
    const r = await call('uac-cancel-expect-487.xml', 'uas-ring-expect-cancel.xml', transport);
    expect(r.uac.errors + r.uas.errors, r.uac.errors + r.uas.errors).toBe('');
    expect(r.uac.code).toBe(0);
    expect(r.uas.code).toBe(0);
    await settled();
    const cancel = events.find((e) => e.type === 'sip.cancel') as { legId: string } | undefined;
    expect(cancel).toBeDefined();
    expect(terminalsOf(cancel!.legId)).toHaveLength(1);
    const bLeg = `B-${cancel!.legId}`;
    expect(terminalsOf(bLeg)).toEqual([{ type: 'sip.ended', legId: bLeg, cause: 'canceled' }]);
  });
});

describe('B leg failures', () => {
  it('an unreachable callee (TCP connection refused) gives exactly one sip.failed with 503', async () => {
    events.length = 0;
    calleeUri = 'sip:nobody@127.0.0.9:9;transport=tcp';
    sip.legs.placeCall('B-direct', {
      requestUri: calleeUri,
      from: { uri: 'sip:a@127.0.0.1' },
      to: { uri: calleeUri },
    });
    const end = Date.now() + 5000;
    while (Date.now() < end && terminalsOf('B-direct').length === 0)
      await new Promise((r) => setTimeout(r, 20));
    expect(terminalsOf('B-direct')).toEqual([
      expect.objectContaining({ type: 'sip.failed', legId: 'B-direct', status: 503 }),
    ]);
  });
});
