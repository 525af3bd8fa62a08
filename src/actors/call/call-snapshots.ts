/**
 * Call snapshots in Redis, written from the call's domain events: what another node needs to
 * restore the call if this one dies (docs/calls.md, recovery). A snapshot is the actor's persisted
 * snapshot without its invoked children (their work lived on the node that died; the restored
 * actor re-invokes what it still needs) and without credentials (never stored).
 */
import type { Logger } from '../../logger.js';
import type { SnapshotStore } from '../../store/snapshot-store.js';
import type { CallEventType } from './call.types.js';
import type { CallObserver } from './call-observers.js';

/** Live call snapshots outlive a crashed node by this much (seconds). */
export const SNAPSHOT_TTL_SECONDS = 6 * 3600;

/** The moments worth a write: each changes what a restored actor would do. */
const WRITTEN: ReadonlySet<CallEventType> = new Set([
  'call.created',
  'call.initiated',
  'call.ringing',
  'call.answered',
  'call.confirmed',
  'call.bridged',
  'call.muted',
]);

/** A persisted snapshot as it is stored. */
export function storable(persisted: unknown): unknown {
  const s = persisted as { children?: unknown; context?: { credentials?: unknown } };
  return {
    ...s,
    children: {},
    ...(s.context ? { context: { ...s.context, credentials: null } } : {}),
  };
}

export function snapshotWriter(
  store: SnapshotStore,
  persistedOf: (sid: string) => unknown | null,
  logger: Logger,
): CallObserver {
  return async (e) => {
    const sid = e.call.sid;
    if (e.type === 'call.ended') {
      await store.delete('call', sid).catch(() => {});
      return;
    }
    if (!WRITTEN.has(e.type)) return;
    const persisted = persistedOf(sid);
    if (persisted === null) return;
    await store.save('call', sid, storable(persisted), SNAPSHOT_TTL_SECONDS).catch((err) => {
      logger.warn({ err, callSid: sid }, 'call snapshot not saved');
    });
  };
}
