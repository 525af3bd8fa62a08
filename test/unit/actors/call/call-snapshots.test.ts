/**
 * The call snapshot writer: what a restore needs is written to the snapshot store, the writes and
 * deletes of one window together, and a call that ends before its window costs no write at all.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CallContext, CallEmitted } from '../../../../src/actors/call/call.types.js';
import { SNAPSHOT_FLUSH_MS, snapshotWriter } from '../../../../src/actors/call/call-snapshots.js';
import { createLogger } from '../../../../src/logger.js';
import type { ActorKind, SnapshotStore } from '../../../../src/store/snapshot-store.js';

const logger = createLogger('silent');

function fakeStore() {
  const ops: string[] = [];
  const store: SnapshotStore = {
    save: async (_kind: ActorKind, sid: string, snapshot: unknown) => {
      ops.push(`save ${sid} ${(snapshot as { context: { step: string } }).context.step}`);
    },
    load: async () => null,
    delete: async (_kind: ActorKind, sid: string) => {
      ops.push(`delete ${sid}`);
    },
  };
  return { store, ops };
}

const call = (sid: string) =>
  ({ origin: { sid, direction: 'inbound' }, sip: { dialog: null } }) as unknown as CallContext;
const confirmed = (sid: string): CallEmitted => ({ type: 'call.confirmed', call: call(sid), at: 0 });
const ringing = (sid: string): CallEmitted => ({ type: 'call.ringing', call: call(sid), at: 0 });
const ended = (sid: string): CallEmitted =>
  ({ type: 'call.ended', call: call(sid), status: 'completed', at: 0 }) as unknown as CallEmitted;

describe('snapshotWriter', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('writes the newest snapshot of a window once, deletes it after the end, skips what a restore does not need', async () => {
    const { store, ops } = fakeStore();
    const steps = new Map<string, string>();
    const writer = snapshotWriter(store, (sid) => ({ context: { step: steps.get(sid) } }), logger);
    steps.set('CA1', 'confirmed');
    writer(ringing('CA1'));
    writer(confirmed('CA1'));
    steps.set('CA1', 'later');
    await vi.advanceTimersByTimeAsync(SNAPSHOT_FLUSH_MS - 1);
    expect(ops).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(ops).toEqual(['save CA1 later']);
    writer(ended('CA1'));
    await vi.advanceTimersByTimeAsync(SNAPSHOT_FLUSH_MS);
    expect(ops).toEqual(['save CA1 later', 'delete CA1']);
  });

  it('a call that ends within its window is neither written nor deleted; an adopted one is deleted', async () => {
    const { store, ops } = fakeStore();
    const writer = snapshotWriter(store, () => ({ context: { step: 'x' } }), logger);
    writer(confirmed('CA2'));
    writer(ended('CA2'));
    writer.adopt('CA3');
    writer(ended('CA3'));
    await vi.advanceTimersByTimeAsync(SNAPSHOT_FLUSH_MS);
    expect(ops).toEqual(['delete CA3']);
  });

  it('a call no longer live at the flush is not written', async () => {
    const { store, ops } = fakeStore();
    const writer = snapshotWriter(store, () => null, logger);
    writer(confirmed('CA4'));
    await vi.advanceTimersByTimeAsync(SNAPSHOT_FLUSH_MS);
    writer(ended('CA4'));
    await vi.advanceTimersByTimeAsync(SNAPSHOT_FLUSH_MS);
    expect(ops).toEqual([]);
  });

  it('a stopping node writes what is due at once, and its window does not write it again', async () => {
    const { store, ops } = fakeStore();
    const writer = snapshotWriter(store, () => ({ context: { step: 'answered' } }), logger);
    writer(confirmed('CA5'));
    await writer.flush();
    expect(ops).toEqual(['save CA5 answered']);
    await vi.advanceTimersByTimeAsync(SNAPSHOT_FLUSH_MS);
    expect(ops).toEqual(['save CA5 answered']);
  });
});
