/**
 * SMS faults end to end (benchmarks-and-faults §4e R18/R19): random throttling
 * loses nothing; a connection dropped mid-window reconnects and re-sends in-flight messages once;
 * an SMSC that stops answering enquire_link gets its bind declared dead and re-established; messages
 * queued while no SMSC is bound survive a server restart and are sent after it, once; pending
 * messages are resumed by one node at a time.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SmsStatus } from '../../../src/store/sms-store.js';
import { startTestServer } from '../../support/server.js';
import {
  PASSWORD,
  type SmsWorld,
  SYSTEM_ID,
  smppUrl,
  startSmsWorld,
  stopSmsWorld,
  waitFor,
} from './support.js';

let w: SmsWorld | undefined;
afterEach(async () => {
  await stopSmsWorld(w);
  w = undefined;
});

async function sendMany(world: SmsWorld, n: number, prefix: string, concurrency = 16): Promise<string[]> {
  const sids: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const to = `+1555${prefix}${String(i).padStart(4, '0')}`;
      const r = await world.ts.request('POST', `${world.base}.json`, {
        auth: world.owner.creds,
        form: { From: world.number, To: to, Body: `msg ${prefix}-${i}` },
      });
      expect(r.status, r.text).toBe(201);
      sids.push(r.json.sid);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return sids;
}

async function statuses(world: SmsWorld, sids: readonly string[]) {
  const out = new Map<string, string>();
  for (const sid of sids)
    out.set(sid, (await world.ts.server.smsStore.get(world.owner.sid, sid))?.status ?? 'lost');
  return out;
}

const countOf = (m: Map<string, string>, status: string) =>
  [...m.values()].filter((s) => s === status).length;

describe('SMSC faults', () => {
  it('5 % random throttling: every message ends sent, none lost or failed; then a drop mid-window re-sends in-flight messages once', async () => {
    w = await startSmsWorld({ label: 'smsthrottle', urlQuery: '&window=10' });
    const world = w;
    world.smsc.behaviour.throttleFraction = 0.05;
    const n = 200;
    const sids = await sendMany(world, n, '301');
    await waitFor(
      async () => countOf(await statuses(world, sids), SmsStatus.Sent) === n,
      30_000,
      'all throttled messages sent',
    );
    const st = await statuses(world, sids);
    expect(countOf(st, SmsStatus.Failed)).toBe(0);
    expect(countOf(st, 'lost')).toBe(0);
    const submits = world.smsc.submits().filter((p) => String(p.destination_addr).startsWith('1555301'));
    expect(submits.length).toBeGreaterThan(n); // some were throttled and retried
    expect(new Set(submits.map((p) => p.destination_addr)).size).toBe(n);
    expect(world.smsc.maxOutstanding).toBeLessThanOrEqual(10);

    // Drop the connection when 5 submit_sm are outstanding (responses delayed so the window fills).
    world.smsc.behaviour.throttleFraction = 0;
    world.smsc.behaviour.respDelayMs = 100;
    world.smsc.behaviour.dropAtOutstanding = 5;
    const bindsBefore = world.smsc.binds;
    const sids2 = await sendMany(world, 40, '302', 20);
    await waitFor(
      async () => countOf(await statuses(world, sids2), SmsStatus.Sent) === 40,
      30_000,
      'all messages sent after the drop',
    );
    expect(world.smsc.drops).toBeGreaterThanOrEqual(1);
    expect(world.smsc.binds).toBeGreaterThan(bindsBefore);
    const perDest = new Map<string, number>();
    for (const p of world.smsc.submits().filter((x) => String(x.destination_addr).startsWith('1555302'))) {
      const dest = String(p.destination_addr);
      perDest.set(dest, (perDest.get(dest) ?? 0) + 1);
    }
    expect(perDest.size).toBe(40);
    const resent = [...perDest.values()].filter((c) => c === 2).length;
    expect(Math.max(...perDest.values())).toBeLessThanOrEqual(2); // re-sent once at most
    expect(resent).toBeGreaterThanOrEqual(1);
    expect(resent).toBeLessThanOrEqual(10); // ≤ window
    // Re-sent messages are flagged: the carrier may have them twice. A message whose first
    // submit_sm was still unread in the dropped socket is flagged too (the node cannot know).
    const flaggedTo = new Set<string>();
    for (const sid of sids2) {
      const m = await world.ts.server.smsStore.get(world.owner.sid, sid);
      if (m?.possibleDuplicate) flaggedTo.add(m.to.replace(/^\+/, ''));
    }
    for (const [dest, count] of perDest) if (count === 2) expect(flaggedTo.has(dest), dest).toBe(true);
    expect(flaggedTo.size).toBeLessThanOrEqual(10); // ≤ window
  });

  it('a segment receipt that comes while another segment is still being retried is kept, not dropped', async () => {
    // First submit accepted, the next five throttled (100+200+400+800+1600 ms of backoff), then all accepted.
    const script = [0.9, 0.1, 0.1, 0.1, 0.1, 0.1];
    w = await startSmsWorld({ label: 'smsseg', random: () => script.shift() ?? 0.9 });
    const world = w;
    world.smsc.behaviour.throttleFraction = 0.5;
    world.smsc.behaviour.receiptDelayMs = 20;
    const body =
      'Segmented message that is longer than one hundred and sixty GSM characters, so that it goes out ' +
      'in two parts with a concatenation header, part two being throttled.';
    expect(body.length).toBeGreaterThan(160);
    const r = await world.ts.request('POST', `${world.base}.json`, {
      auth: world.owner.creds,
      form: { From: world.number, To: '+15553070000', Body: body },
    });
    expect(r.status).toBe(201);
    await waitFor(
      async () =>
        (await world.ts.server.smsStore.get(world.owner.sid, r.json.sid))?.status === SmsStatus.Delivered,
      15_000,
      'delivered once both segments are',
    );
    const parts = world.smsc.submits().filter((p) => p.destination_addr === '15553070000');
    expect(parts.length).toBe(7); // 1 + 5 throttled + 1 accepted
  });

  it('enquire_link unanswered → bind declared dead and re-established; sending goes on', async () => {
    w = await startSmsWorld({ label: 'smsenquire', urlQuery: '&enquire_link=0.2&response_timeout=0.3' });
    const world = w;
    const binds = world.smsc.binds;
    world.smsc.behaviour.answerEnquireLink = false;
    await waitFor(() => world.smsc.binds >= binds + 1, 10_000, 're-bind');
    world.smsc.behaviour.answerEnquireLink = true;
    await waitFor(() => world.ts.server.smppLink?.bound === true, 10_000, 'bound again');
    const [sid] = await sendMany(world, 1, '303', 1);
    await waitFor(
      async () => (await world.ts.server.smsStore.get(world.owner.sid, sid!))?.status === SmsStatus.Sent,
      10_000,
      'sent after re-bind',
    );
    expect(world.smsc.count('enquire_link')).toBeGreaterThanOrEqual(1);
  });

  it('server restart with queued messages: they are sent after the restart, once each', async () => {
    w = await startSmsWorld({ label: 'smsrestart' });
    const world = w;
    // The SMSC refuses our bind from now on: messages are accepted and queued.
    world.smsc.behaviour.accounts = { someone_else: 'x' };
    world.smsc.dropAll();
    await waitFor(() => world.ts.server.smppLink?.bound === false, 5000, 'unbound');
    const sids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await world.ts.request('POST', `${world.base}.json`, {
        auth: world.owner.creds,
        form: { From: world.number, To: `+155530400${i}`, Body: `queued ${i}` },
      });
      expect(r.status, r.text).toBe(201);
      expect(r.json.status).toBe('queued');
      sids.push(r.json.sid);
    }
    await world.ts.stop();
    const st = await (async () => {
      const probe = await startTestServer({
        ns: world.ts.ns,
        env: { SMPP_URL: smppUrl(world.smsc.port), NUMBER_POOL: '+14155550100-+14155550199' },
      });
      // Still refused: the restarted server keeps them queued.
      const queued = await Promise.all(sids.map((s) => probe.server.smsStore.get(world.owner.sid, s)));
      expect(queued.every((m) => m?.status === SmsStatus.Queued)).toBe(true);
      world.smsc.behaviour.accounts = { [SYSTEM_ID]: PASSWORD };
      await waitFor(
        async () => {
          const ms = await Promise.all(sids.map((s) => probe.server.smsStore.get(world.owner.sid, s)));
          return ms.every((m) => m?.status === SmsStatus.Sent);
        },
        15_000,
        'queued messages sent after restart',
      );
      await probe.stop();
      return true;
    })();
    expect(st).toBe(true);
    const perDest = world.smsc.submits().filter((p) => String(p.destination_addr).startsWith('155530400'));
    expect(perDest).toHaveLength(5);
  });

  it('receipts arriving after a restart find their message in the store: delivered, one callback each', async () => {
    w = await startSmsWorld({ label: 'smslatedlr' });
    const world = w;
    world.hooks.script('/status', { status: 204 });
    world.smsc.behaviour.receiptDelayMs = 1500;
    const sids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await world.ts.request('POST', `${world.base}.json`, {
        auth: world.owner.creds,
        form: {
          From: world.number,
          To: `+155530500${i}`,
          Body: `late ${i}`,
          StatusCallback: `${world.hooks.origin}/status`,
        },
      });
      sids.push(r.json.sid);
    }
    const statusOf = (s: string) => world.ts.server.smsStore.getAnyAccount(s).then((m) => m?.status);
    await waitFor(
      async () => (await Promise.all(sids.map(statusOf))).every((s) => s === SmsStatus.Sent),
      5000,
      'sent',
    );
    await world.ts.stop(); // receipts are due while the server is down; the SMSC keeps them
    const probe = await startTestServer({
      ns: world.ts.ns,
      env: { SMPP_URL: smppUrl(world.smsc.port), NUMBER_POOL: '+14155550100-+14155550199' },
    });
    try {
      await waitFor(
        async () => {
          const ms = await Promise.all(sids.map((s) => probe.server.smsStore.getAnyAccount(s)));
          return ms.every((m) => m?.status === SmsStatus.Delivered);
        },
        15_000,
        'delivered after restart',
      );
      await new Promise((r) => setTimeout(r, 200));
      for (const sid of sids) {
        const events = world.hooks
          .requestsTo('/status')
          .map((r) => new URLSearchParams(r.rawBody.toString()))
          .filter((f) => f.get('MessageSid') === sid)
          .map((f) => f.get('MessageStatus'));
        expect(events).toEqual(['sent', 'delivered']);
      }
    } finally {
      await probe.stop();
    }
  });

  it('pending messages are claimed by one node at a time (resume leases)', async () => {
    w = await startSmsWorld({ label: 'smsclaims' });
    const store = w.ts.server.smsStore;
    const now = new Date();
    const sids = [0, 1, 2].map((i) => `SM${'0'.repeat(31)}${i}`);
    for (const sid of sids) {
      await store.insert(
        {
          sid,
          accountSid: w.owner.sid,
          from: w.number,
          to: '+15553060000',
          body: 'pending',
          status: SmsStatus.Queued,
          direction: 'outbound-api',
          channel: 'smpp',
          price: null,
          priceUnit: 'USD',
          apiVersion: '2012-04-24',
          errorCode: null,
          errorMessage: null,
          statusCallback: null,
          destinationNetworkId: null,
          segments: 0,
          possibleDuplicate: false,
          dateSent: null,
          dateCreated: now,
          dateUpdated: now,
        },
        { node: 'node-a', until: new Date(now.getTime() + 60_000) },
      );
    }
    // Held by node-a: nobody claims them, node-a itself neither (it is working on them).
    expect(await store.claimPending('node-b', 60_000, 100)).toEqual([]);
    expect(await store.claimPending('node-a', 60_000, 100)).toEqual([]);
    await store.renewClaims('node-a', 60_000);
    expect(await store.claimPending('node-b', 60_000, 100)).toEqual([]);
    // An expired lease (node-a died) is taken over.
    await store.renewClaims('node-a', -1_000);
    expect((await store.claimPending('node-b', 60_000, 100)).map((m) => m.sid).sort()).toEqual(sids);
    await store.releaseClaims('node-b');
    const [a, b] = await Promise.all([
      store.claimPending('node-b', 60_000, 100),
      store.claimPending('node-c', 60_000, 100),
    ]);
    expect(a.length + b.length).toBe(3);
    expect(new Set([...a, ...b].map((m) => m.sid)).size).toBe(3);
    // A status change is applied once: the second identical transition finds nothing to change.
    const first = await store.transition({
      sid: sids[0]!,
      from: ['queued', 'sending'],
      to: 'sent',
      providerIds: ['x1'],
    });
    const again = await store.transition({
      sid: sids[0]!,
      from: ['queued', 'sending'],
      to: 'sent',
      providerIds: ['x1'],
    });
    expect(first?.status).toBe('sent');
    expect(again).toBeNull();
    expect((await store.findByProviderId('x1'))?.message.sid).toBe(sids[0]);
  });
});
