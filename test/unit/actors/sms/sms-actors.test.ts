/** Live SMS actors: link up for queued messages, eviction after the receipt wait, retirement after the writes. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SidChains } from '../../../../src/actors/sms/sid-chains.js';
import type { SendOutput, SmsStatusChanged } from '../../../../src/actors/sms/sms.types.js';
import { inputOf, SmsActors } from '../../../../src/actors/sms/sms-actors.js';
import { SmsDirection, SmsStatus } from '../../../../src/store/sms-store.js';
import { receivedSms } from '../../../support/records.js';
import { deferred, flush, machineWith, never, silent } from './fixtures.js';

function pool(opts: { bound?: boolean; submit?: () => Promise<SendOutput> } = {}) {
  const writes = new SidChains(() => {});
  const statuses: SmsStatusChanged[] = [];
  const evicted: Array<[string, readonly string[]]> = [];
  const actors = new SmsActors({
    machine: machineWith(),
    submit: opts.submit ?? never,
    writes,
    linkBound: () => opts.bound ?? false,
    receiptWaitMs: 1_000,
    onStatus: (e) => statuses.push(e),
    onEvict: (sid, ids) => evicted.push([sid, ids]),
    logger: silent,
  });
  return { actors, writes, statuses, evicted };
}

const outbound = (status: SmsStatus) =>
  inputOf(receivedSms('AC1', { status, direction: SmsDirection.OutboundApi, dateSent: null }));

afterEach(() => {
  vi.useRealTimers();
});

describe('SmsActors', () => {
  it('sends a queued message at once when the link is bound, else on linkUp', async () => {
    const bound = pool({ bound: true });
    const a = bound.actors.spawn(outbound(SmsStatus.Queued));
    expect(a.getSnapshot().hasTag(SmsStatus.Sending)).toBe(true);
    expect(bound.statuses.map((s) => s.to)).toEqual([SmsStatus.Sending]);

    const down = pool();
    const b = down.actors.spawn(outbound(SmsStatus.Queued));
    expect(b.getSnapshot().hasTag(SmsStatus.Queued)).toBe(true);
    down.actors.linkUp();
    expect(b.getSnapshot().hasTag(SmsStatus.Sending)).toBe(true);
    expect(down.actors.get(b.getSnapshot().context.sid)).toBe(b);
  });

  it('evicts a sent message RECEIPT_WAIT_MS after it was sent, with its provider ids', async () => {
    vi.useFakeTimers();
    const p = pool({ submit: async () => ({ providerIds: ['p1', 'p2'], possibleDuplicate: false }) });
    const input = outbound(SmsStatus.Sending);
    p.actors.spawn(input);
    await vi.advanceTimersByTimeAsync(0);
    expect(p.statuses.at(-1)?.to).toBe(SmsStatus.Sent);
    expect(p.actors.size).toBe(1);
    await vi.advanceTimersByTimeAsync(999);
    expect(p.evicted).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(p.evicted).toEqual([[input.sid, ['p1', 'p2']]]);
    expect(p.actors.size).toBe(0);
  });

  it('forgets a final message only after its pending store writes', async () => {
    const p = pool({
      submit: async () => Promise.reject({ requeue: false, errorCode: 30008, errorMessage: null }),
    });
    const gate = deferred<void>();
    const input = outbound(SmsStatus.Sending);
    p.writes.add(input.sid, () => gate.promise);
    p.actors.spawn(input);
    await flush();
    expect(p.statuses.at(-1)?.to).toBe(SmsStatus.Failed);
    expect(p.actors.size).toBe(1);
    gate.resolve();
    await flush();
    expect(p.evicted).toEqual([[input.sid, []]]);
    expect(p.actors.size).toBe(0);
  });

  it('stopAll stops every actor and cancels pending evictions', async () => {
    vi.useFakeTimers();
    const p = pool({ submit: async () => ({ providerIds: ['p1'], possibleDuplicate: false }) });
    const a = p.actors.spawn(outbound(SmsStatus.Sending));
    await vi.advanceTimersByTimeAsync(0);
    p.actors.stopAll();
    expect(a.getSnapshot().status).toBe('stopped');
    expect(p.actors.size).toBe(0);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(p.evicted).toEqual([]);
  });
});
