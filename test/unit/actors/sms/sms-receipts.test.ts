/** Receipt routing: live actors, receipts that beat the submit result, restore from the store, segments. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SidChains } from '../../../../src/actors/sms/sid-chains.js';
import { inputOf, SmsActors } from '../../../../src/actors/sms/sms-actors.js';
import { SmsReceipts } from '../../../../src/actors/sms/sms-receipts.js';
import type { SmppReceiptEvent } from '../../../../src/smpp/port.js';
import {
  type SegmentOutcome,
  SmsDirection,
  type SmsMessage,
  SmsStatus,
} from '../../../../src/store/sms-store.js';
import { receivedSms } from '../../../support/records.js';
import { machineWith, never, silent } from './fixtures.js';

const LOOKUP_MS = 100;

function receipt(messageId: string, outcome: SmppReceiptEvent['outcome'], matched = true): SmppReceiptEvent {
  return {
    type: 'smpp.receipt',
    messageId,
    stat: outcome === 'delivered' ? 'DELIVRD' : outcome === 'pending' ? 'ENROUTE' : 'UNDELIV',
    err: null,
    outcome,
    errorCode: outcome === 'undelivered' ? 30003 : null,
    matched,
    connection: 'c1',
  };
}

function world(stored: Map<string, { message: SmsMessage; providerIds: string[] }> = new Map()) {
  const writes = new SidChains(() => {});
  const segments: Array<[string, SegmentOutcome]> = [];
  const lookups: string[] = [];
  const statuses: Array<[string, SmsStatus]> = [];
  let receipts: SmsReceipts | undefined;
  const actors = new SmsActors({
    machine: machineWith(),
    submit: never,
    writes,
    linkBound: () => true,
    receiptWaitMs: 60_000,
    onStatus: (e) => {
      statuses.push([e.sid, e.to]);
      if (e.providerIds) receipts?.register(e.sid, e.providerIds);
    },
    onEvict: (_sid, ids) => receipts?.forget(ids),
    logger: silent,
  });
  receipts = new SmsReceipts({
    store: {
      findByProviderId: async (id) => {
        lookups.push(id);
        for (const s of stored.values()) {
          if (s.providerIds.includes(id)) return { ...s, outcomes: {} };
        }
        return null;
      },
      recordSegmentOutcome: async (id, outcome) => void segments.push([id, outcome]),
    },
    actors,
    writes,
    earlyLookupMs: LOOKUP_MS,
    logger: silent,
  });
  return { receipts, actors, segments, lookups, statuses };
}

const sentMessage = (fields: Partial<SmsMessage> = {}) =>
  receivedSms('AC1', { status: SmsStatus.Sent, direction: SmsDirection.OutboundApi, ...fields });

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('SmsReceipts', () => {
  it('gives a receipt to the live actor of its provider id (ids compared normalised)', async () => {
    const w = world();
    const m = sentMessage();
    const actor = w.actors.spawn({ ...inputOf(m), providerIds: ['ab'] });
    w.receipts.register(m.sid, ['ab']);
    w.receipts.route(receipt('00AB', 'delivered'));
    expect(actor.getSnapshot().hasTag(SmsStatus.Delivered)).toBe(true);
    expect(w.lookups).toEqual([]);
  });

  it('keeps a receipt that beat the submit result and delivers it once the ids are known', async () => {
    const w = world();
    const m = sentMessage();
    w.receipts.route(receipt('ab', 'pending'));
    w.receipts.route(receipt('ab', 'undelivered'));
    w.receipts.route(receipt('ab', 'pending')); // an intermediate receipt never replaces a final one
    const actor = w.actors.spawn({ ...inputOf(m), providerIds: ['ab'] });
    w.receipts.register(m.sid, ['ab']);
    await vi.advanceTimersByTimeAsync(0);
    expect(actor.getSnapshot().hasTag(SmsStatus.Undelivered)).toBe(true);
    await vi.advanceTimersByTimeAsync(LOOKUP_MS * 10);
    expect(w.lookups).toEqual([]);
  });

  it('restores a sent message from the store for a receipt after a restart or eviction', async () => {
    const m = sentMessage();
    const w = world(new Map([[m.sid, { message: m, providerIds: ['p1', 'p2'] }]]));
    w.receipts.route(receipt('p1', 'delivered', false));
    await vi.advanceTimersByTimeAsync(0);
    expect(w.lookups).toEqual(['p1']);
    const actor = w.actors.get(m.sid);
    expect(actor?.getSnapshot().hasTag(SmsStatus.Sent)).toBe(true);
    // Multi-part: the segment's outcome is recorded; the next receipt finds the restored actor.
    expect(w.segments).toEqual([['p1', 'delivered']]);
    w.receipts.route(receipt('p2', 'delivered'));
    expect(actor?.getSnapshot().hasTag(SmsStatus.Delivered)).toBe(true);
    expect(w.lookups).toEqual(['p1']);
  });

  it('looks a matched receipt up again while its message is pending, then gives up', async () => {
    const m = sentMessage({ status: SmsStatus.Sending });
    const stored = new Map([[m.sid, { message: m, providerIds: ['p1'] }]]);
    const w = world(stored);
    w.receipts.route(receipt('p1', 'delivered'));
    await vi.advanceTimersByTimeAsync(LOOKUP_MS);
    expect(w.lookups).toEqual(['p1']);
    await vi.advanceTimersByTimeAsync(LOOKUP_MS);
    expect(w.lookups).toEqual(['p1', 'p1']);
    stored.set(m.sid, { message: { ...m, status: SmsStatus.Sent }, providerIds: ['p1'] });
    await vi.advanceTimersByTimeAsync(LOOKUP_MS);
    expect(w.statuses).toEqual([[m.sid, SmsStatus.Delivered]]);

    const never = world();
    never.receipts.route(receipt('zz', 'delivered'));
    await vi.advanceTimersByTimeAsync(LOOKUP_MS * 50);
    // The first lookup, then one every LOOKUP_MS for 40 more (60 s at the default 1.5 s).
    expect(never.lookups).toHaveLength(41);
  });

  it('an unmatched receipt for no message is looked up once and dropped; stop cancels waiting ones', async () => {
    const w = world();
    w.receipts.route(receipt('zz', 'delivered', false));
    await vi.advanceTimersByTimeAsync(LOOKUP_MS * 5);
    expect(w.lookups).toEqual(['zz']);
    w.receipts.route(receipt('yy', 'delivered'));
    w.receipts.stop();
    await vi.advanceTimersByTimeAsync(LOOKUP_MS * 5);
    expect(w.lookups).toEqual(['zz']);
  });
});
