import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeMessage, encodeUcs2 } from '../../../src/smpp/encoding.js';
import { isSmppError } from '../../../src/smpp/errors.js';
import { SmppCarrierLink, type SmppLinkOptions } from '../../../src/smpp/link.js';
import type { SmppEvent, SmppReceiptEvent, SubmitResult } from '../../../src/smpp/port.js';
import { parseSmppUrl, parseSmppUrls } from '../../../src/smpp/url.js';
import { TestSmsc } from '../../support/smsc.js';

const logger = pino({ level: 'silent' });
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(
  query = '',
  opts: Partial<SmppLinkOptions> = {},
): Promise<{ smsc: TestSmsc; link: SmppCarrierLink; events: SmppEvent[] }> {
  const smsc = new TestSmsc();
  smsc.behaviour.accounts = { esme1: 'pw' };
  const port = await smsc.listen();
  cleanups.push(() => smsc.close());
  const cfg = parseSmppUrl(`smpp://esme1:pw@127.0.0.1:${port}?reconnect_min=0.05&reconnect_max=0.5${query}`);
  const link = new SmppCarrierLink([cfg], { logger, throttleMinMs: 100, throttleMaxMs: 400, ...opts });
  cleanups.push(() => link.close());
  const events: SmppEvent[] = [];
  link.subscribe((e) => events.push(e));
  link.start();
  await waitFor(() => link.bound);
  return { smsc, link, events };
}

async function waitFor(pred: () => boolean, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error('waitFor timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const receipts = (events: SmppEvent[]): SmppReceiptEvent[] =>
  events.filter((e): e is SmppReceiptEvent => e.type === 'smpp.receipt');

describe('SMPP carrier link against a local SMSC', () => {
  it('binds with the configured credentials and submits with TLV 0x060E and explicit data_coding', async () => {
    const { smsc, link } = await setup();
    expect(smsc.binds).toBe(1);
    const bind = smsc.received.find((r) => r.command === 'bind_transceiver')?.pdu;
    expect(bind?.system_id).toBe('esme1');
    const res = await link.submit({
      from: '15550001111',
      to: '15551234567',
      body: 'Hello',
      destinationNetworkId: 'net-1550',
    });
    expect(res.messageIds).toHaveLength(1);
    const pdu = smsc.submits()[0];
    expect(pdu?.dest_network_id).toBe('net-1550');
    expect(pdu?.data_coding).toBe(0);
    expect(pdu?.registered_delivery).toBe(1);
    expect(pdu?.destination_addr).toBe('15551234567');
    const res2 = await link.submit({ from: '1', to: '2', body: 'Привет' });
    expect(res2.dataCoding).toBe(8);
    expect(smsc.submits()[1]?.dest_network_id).toBeUndefined();
  });

  it('uses the TON/NPI and registered_delivery of the URL, overridable per message', async () => {
    const { smsc, link } = await setup(
      '&source_ton=5&source_npi=0&dest_ton=1&dest_npi=1&registered_delivery=0',
    );
    await link.submit({ from: 'Switchboard', to: '15551234567', body: 'a' });
    await link.submit({ from: 'Switchboard', to: '15551234567', body: 'b', registeredDelivery: true });
    const [a, b] = smsc.submits();
    expect(a).toMatchObject({ source_addr_ton: 5, source_addr_npi: 0, dest_addr_ton: 1, dest_addr_npi: 1 });
    expect(a?.registered_delivery).toBe(0);
    expect(b?.registered_delivery).toBe(1);
  });

  it('decodes a concatenated GSM-7 MO with extension characters', async () => {
    const { smsc, events } = await setup();
    const text = `${'Price {10} € '.repeat(14)}end`;
    const m = encodeMessage(text, 'auto', 77);
    expect(m.segments.length).toBe(2);
    for (const seg of m.segments) {
      smsc.deliverMo({
        from: '15557654321',
        to: '15550001111',
        dataCoding: 0,
        udh: true,
        shortMessage: seg.shortMessage,
      });
    }
    await waitFor(() => events.some((e) => e.type === 'smpp.deliverSm'));
    expect(events.find((e) => e.type === 'smpp.deliverSm')).toMatchObject({ body: text, segments: 2 });
  });

  it('reconnects with exponential backoff capped at reconnect_max while the SMSC is down', async () => {
    const smsc = new TestSmsc();
    const port = await smsc.listen();
    await smsc.close(); // nothing listens on this port any more
    const link = new SmppCarrierLink(
      [parseSmppUrl(`smpp://a:b@127.0.0.1:${port}?reconnect_min=0.05&reconnect_max=0.2`)],
      { logger },
    );
    cleanups.push(() => link.close());
    const attempts: number[] = [];
    link.subscribe((e) => {
      if (e.type === 'smpp.linkState' && e.state === 'connecting') attempts.push(Date.now());
    });
    link.start();
    await waitFor(() => attempts.length >= 6);
    const gaps = attempts.slice(1).map((t, i) => t - (attempts[i] ?? 0));
    expect(gaps[0]).toBeGreaterThanOrEqual(45);
    expect(gaps[1]).toBeGreaterThanOrEqual(95);
    expect(gaps[2]).toBeGreaterThanOrEqual(190);
    for (const g of gaps.slice(3)) {
      expect(g).toBeGreaterThanOrEqual(190);
      expect(g).toBeLessThan(400);
    }
    // submits wait in the queue (not failed) while nothing is bound
    let settled = false;
    void link.submit({ from: '1', to: '2', body: 'x' }).then(
      () => {
        settled = true;
      },
      () => {
        settled = true;
      },
    );
    await new Promise((r) => setTimeout(r, 100));
    expect(settled).toBe(false);
    expect(link.queued).toBe(1);
  });

  it('refuses a bad password and keeps retrying the bind', async () => {
    const smsc = new TestSmsc();
    smsc.behaviour.accounts = { esme1: 'right' };
    const port = await smsc.listen();
    cleanups.push(() => smsc.close());
    const link = new SmppCarrierLink(
      [parseSmppUrl(`smpp://esme1:wrong@127.0.0.1:${port}?reconnect_min=0.05&reconnect_max=0.1`)],
      { logger },
    );
    cleanups.push(() => link.close());
    link.start();
    await waitFor(() => smsc.count('bind_transceiver') >= 3);
    expect(link.bound).toBe(false);
  });

  it('never exceeds the send window and splits long GSM-7 messages into 153-septet parts', async () => {
    const { smsc, link } = await setup('&window=4');
    smsc.behaviour.respDelayMs = 20;
    const body = 'x'.repeat(153 * 2 + 10);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => link.submit({ from: '1', to: String(i), body })),
    );
    expect(results.every((r) => r.segments === 3)).toBe(true);
    expect(smsc.submits()).toHaveLength(30);
    expect(smsc.maxOutstanding).toBe(4);
    const first = smsc.submits()[0];
    expect((first?.esm_class ?? 0) & 0x40).toBe(0x40);
  });

  it('emits delivered and undelivered receipts matched by message id, duplicates once', async () => {
    const { smsc, link, events } = await setup();
    smsc.behaviour.receiptDelayMs = 20;
    smsc.behaviour.receiptStat = (dest) => (dest === 'bad' ? 'UNDELIV' : 'DELIVRD');
    const ok = await link.submit({ from: '1', to: 'good', body: 'a' });
    const bad = await link.submit({ from: '1', to: 'bad', body: 'b' });
    await waitFor(() => receipts(events).length === 2);
    const byId = new Map(receipts(events).map((r) => [r.messageId, r]));
    expect(byId.get(ok.messageIds[0] ?? '')?.outcome).toBe('delivered');
    const u = byId.get(bad.messageIds[0] ?? '');
    expect(u?.outcome).toBe('undelivered');
    expect(u?.errorCode).toBe(30005);
    expect(u?.matched).toBe(true);
    // the SMSC repeats a receipt three times: still one event
    smsc.behaviour.receiptCopies = 3;
    const again = await link.submit({ from: '1', to: 'good', body: 'c' });
    await waitFor(() => smsc.count('deliver_sm_resp') === 5);
    const forAgain = receipts(events).filter((r) => r.messageId === again.messageIds[0]);
    expect(forAgain).toHaveLength(1);
  });

  it('matches a receipt carrying only receipted_message_id and message_state TLVs', async () => {
    const { smsc, link, events } = await setup();
    smsc.behaviour.receiptTextless = true;
    smsc.behaviour.receiptDelayMs = 10;
    smsc.behaviour.receiptStat = () => 'EXPIRED';
    const res = await link.submit({ from: '1', to: '2', body: 'x' });
    await waitFor(() => receipts(events).length === 1);
    expect(receipts(events)[0]).toMatchObject({
      messageId: res.messageIds[0],
      stat: 'EXPIRED',
      outcome: 'undelivered',
      errorCode: 30003,
      matched: true,
    });
  });

  it('parks a receipt that arrives before its submit_sm_resp and matches it afterwards', async () => {
    const { smsc, link, events } = await setup();
    smsc.behaviour.receiptBeforeResp = true;
    smsc.behaviour.receiptDelayMs = 0;
    smsc.behaviour.respDelayMs = 150;
    const res = await link.submit({ from: '1', to: '2', body: 'early' });
    await waitFor(() => receipts(events).length === 1);
    const r = receipts(events)[0];
    expect(r?.messageId).toBe(res.messageIds[0]);
    expect(r?.matched).toBe(true);
    expect(r?.outcome).toBe('delivered');
    // the receipt really came first: the SMSC got our deliver_sm_resp before it answered submit_sm
    const respAt = smsc.received.find((x) => x.command === 'deliver_sm_resp')?.at ?? 0;
    expect(respAt).toBeGreaterThan(0);
  });

  it('reassembles a long UCS-2 MO message', async () => {
    const { smsc, events } = await setup();
    const text = 'Привет, мир! ✓ '.repeat(12);
    const parts: string[] = [];
    for (let i = 0; i < text.length; i += 67) parts.push(text.slice(i, i + 67));
    // deliver out of order
    const order = parts.map((_, i) => i).reverse();
    for (const i of order) {
      const udh = Buffer.from([0x05, 0x00, 0x03, 0x2a, parts.length, i + 1]);
      smsc.deliverMo({
        from: '15557654321',
        to: '15550001111',
        dataCoding: 8,
        udh: true,
        shortMessage: Buffer.concat([udh, encodeUcs2(parts[i] ?? '')]),
      });
    }
    await waitFor(() => events.some((e) => e.type === 'smpp.deliverSm'));
    const mo = events.filter((e) => e.type === 'smpp.deliverSm');
    expect(mo).toHaveLength(1);
    expect(mo[0]).toMatchObject({ body: text, from: '15557654321', segments: parts.length });
    await waitFor(() => smsc.count('deliver_sm_resp') === parts.length);
  });

  it('throttling 5 % at random: every message ends submitted or failed with a reason, none lost', async () => {
    const { smsc, link } = await setup('&window=10');
    smsc.behaviour.throttleFraction = 0.05;
    const n = 400;
    const outcomes = await Promise.allSettled(
      Array.from({ length: n }, (_, i) => link.submit({ from: '1', to: String(i), body: `m${i}` })),
    );
    const ok = outcomes.filter((o): o is PromiseFulfilledResult<SubmitResult> => o.status === 'fulfilled');
    const failed = outcomes.filter((o) => o.status === 'rejected');
    expect(ok.length + failed.length).toBe(n);
    for (const f of failed) expect(isSmppError((f as PromiseRejectedResult).reason)).toBe(true);
    // throttling is retried, never a failure
    expect(failed).toHaveLength(0);
    expect(smsc.count('submit_sm')).toBeGreaterThan(n);
    expect(new Set(ok.map((o) => o.value.messageIds[0])).size).toBe(n);
    expect(smsc.maxOutstanding).toBeLessThanOrEqual(10);
  });

  it('backs off at least 100 ms after ESME_RTHROTTLED', async () => {
    const { smsc, link } = await setup();
    smsc.behaviour.submitStatus = 0x58;
    const p = link.submit({ from: '1', to: '2', body: 'x' });
    await waitFor(() => smsc.count('submit_sm') >= 3);
    smsc.behaviour.submitStatus = null;
    await p;
    const times = smsc.received.filter((r) => r.command === 'submit_sm').map((r) => r.at);
    for (let i = 1; i < times.length; i++)
      expect((times[i] ?? 0) - (times[i - 1] ?? 0)).toBeGreaterThanOrEqual(95);
    expect((times[2] ?? 0) - (times[1] ?? 0)).toBeGreaterThanOrEqual(190);
  });

  it('a non-retryable status rejects with SmppError carrying the status and spec code', async () => {
    const { smsc, link } = await setup();
    smsc.behaviour.submitStatus = 0x0b;
    const err = await link.submit({ from: '1', to: '2', body: 'x' }).catch((e: unknown) => e);
    expect(isSmppError(err)).toBe(true);
    if (isSmppError(err)) {
      expect(err.commandStatus).toBe(0x0b);
      expect(err.errorCode).toBe(30005);
    }
  });

  it('SMSC drops the connection mid-window: reconnects, re-sends in-flight once, flags duplicates', async () => {
    const { smsc, link, events } = await setup('&window=5');
    smsc.behaviour.respDelayMs = 30;
    smsc.behaviour.dropAtOutstanding = 5;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => link.submit({ from: '1', to: String(i), body: `m${i}` })),
    );
    expect(smsc.drops).toBe(1);
    expect(smsc.binds).toBe(2);
    expect(results).toHaveLength(20);
    const dups = results.filter((r) => r.possibleDuplicate);
    expect(dups.length).toBeGreaterThan(0);
    expect(dups.length).toBeLessThanOrEqual(5);
    // each destination was submitted at most twice (original + one re-send)
    const perDest = new Map<string, number>();
    for (const p of smsc.submits())
      perDest.set(p.destination_addr ?? '', (perDest.get(p.destination_addr ?? '') ?? 0) + 1);
    expect(Math.max(...perDest.values())).toBeLessThanOrEqual(2);
    expect(events.some((e) => e.type === 'smpp.linkState' && e.state === 'disconnected')).toBe(true);
    expect(smsc.maxOutstanding).toBeLessThanOrEqual(5);
  });

  it('spreads submits over several comma-separated connections', async () => {
    const a = new TestSmsc();
    const b = new TestSmsc();
    const pa = await a.listen();
    const pb = await b.listen();
    cleanups.push(
      () => a.close(),
      () => b.close(),
    );
    a.behaviour.respDelayMs = 10;
    b.behaviour.respDelayMs = 10;
    const link = new SmppCarrierLink(
      parseSmppUrls(`smpp://x:y@127.0.0.1:${pa}?window=2,smpp://x:y@127.0.0.1:${pb}?window=2`),
      {
        logger,
      },
    );
    cleanups.push(() => link.close());
    link.start();
    await waitFor(() => link.stats().every((c) => c.state === 'bound'));
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => link.submit({ from: '1', to: String(i), body: 'x' })),
    );
    expect(a.count('submit_sm') + b.count('submit_sm')).toBe(20);
    expect(a.count('submit_sm')).toBeGreaterThan(0);
    expect(b.count('submit_sm')).toBeGreaterThan(0);
    expect(Math.max(a.maxOutstanding, b.maxOutstanding)).toBeLessThanOrEqual(2);
  });

  it('emits a parked receipt unmatched when its submit_sm_resp never identifies it', async () => {
    const { smsc, events } = await setup('', { earlyReceiptTtlMs: 100 });
    const session = smsc.sessions()[0];
    expect(session).toBeDefined();
    if (session) smsc.deliverReceipt(session, 'ZZ-unknown', 'DELIVRD', '2', '1');
    await waitFor(() => receipts(events).length === 1, 3000);
    expect(receipts(events)[0]).toMatchObject({ matched: false, outcome: 'delivered' });
  });

  it('SMSC stops answering enquire_link: bind declared dead within interval + timeout, re-established', async () => {
    const { smsc, link, events } = await setup('&enquire_link=0.2&response_timeout=0.3');
    smsc.behaviour.answerEnquireLink = false;
    const t0 = Date.now();
    await waitFor(() => events.some((e) => e.type === 'smpp.linkState' && e.state === 'disconnected'));
    const dead = Date.now() - t0;
    expect(dead).toBeLessThanOrEqual(200 + 300 + 250);
    const reason = events.find((e) => e.type === 'smpp.linkState' && e.state === 'disconnected');
    expect(reason).toMatchObject({ reason: 'enquire_link response timeout' });
    smsc.behaviour.answerEnquireLink = true;
    await waitFor(() => smsc.binds >= 2 && link.bound);
    await link.submit({ from: '1', to: '2', body: 'after' });
  });

  it('answers a garbage PDU with generic_nack and an SMSC enquire_link with its resp', async () => {
    const { smsc, link } = await setup();
    const garbage = Buffer.alloc(16);
    garbage.writeUInt32BE(16, 0);
    garbage.writeUInt32BE(0x0000_0fff, 4);
    garbage.writeUInt32BE(0, 8);
    garbage.writeUInt32BE(77, 12);
    smsc.writeRaw(garbage);
    await waitFor(() => smsc.count('generic_nack') === 1);
    expect(smsc.received.find((r) => r.command === 'generic_nack')?.pdu.sequence_number).toBe(77);
    expect(link.bound).toBe(true);
  });

  it('answers an unbind from the SMSC and binds again', async () => {
    const { smsc, link } = await setup();
    let answered = false;
    smsc.sessions()[0]?.unbind({}, () => {
      answered = true;
    });
    await waitFor(() => answered && smsc.binds === 2 && link.bound);
    await link.submit({ from: '1', to: '2', body: 'again' });
  });

  it('shutdown drains in-flight submits, then unbinds; queued ones are rejected LOCAL_CLOSED', async () => {
    const { smsc, link } = await setup('&window=2');
    smsc.behaviour.respDelayMs = 300;
    const pending = Array.from({ length: 6 }, (_, i) => link.submit({ from: '1', to: String(i), body: 'x' }));
    await waitFor(() => smsc.count('submit_sm') === 2);
    await link.close();
    const settled = await Promise.allSettled(pending);
    expect(settled).toHaveLength(6);
    // the two in flight were answered before unbind (drained), the four queued were never sent
    expect(settled.slice(0, 2).every((r) => r.status === 'fulfilled')).toBe(true);
    for (const r of settled.slice(2)) {
      expect(r.status).toBe('rejected');
      if (r.status === 'rejected') expect(isSmppError(r.reason) && r.reason.commandStatus).toBe(-2);
    }
    const unbindAt = smsc.received.find((r) => r.command === 'unbind')?.at ?? 0;
    expect(unbindAt).toBeGreaterThanOrEqual(
      Math.max(...smsc.received.filter((r) => r.command === 'submit_sm').map((r) => r.at)) + 250,
    );
    expect(smsc.unbinds).toBe(1);
    expect(smsc.count('submit_sm')).toBe(2);
  });

  it('shutdown sends unbind and rejects queued messages with LOCAL_CLOSED', async () => {
    const { smsc, link } = await setup();
    await link.submit({ from: '1', to: '2', body: 'x' });
    await link.close();
    await link.close();
    expect(smsc.unbinds).toBe(1);
    const err = await link.submit({ from: '1', to: '2', body: 'y' }).catch((e: unknown) => e);
    expect(isSmppError(err) && err.commandStatus).toBe(-2);
  });
});
