/**
 * Call snapshots in Redis, written from the call's domain events: what another node needs to
 * restore the call if this one dies (docs/calls.md, recovery). A snapshot is the actor's persisted
 * snapshot without its invoked children (their work lived on the node that died; the restored
 * actor re-invokes what it still needs) and without credentials (never stored).
 */
import type { Logger } from '../../logger.js';
import type { SnapshotStore } from '../../store/snapshot-store.js';
import type { CallEmitted } from './call.types.js';
import type { CallObserver } from './call-observers.js';

/** Live call snapshots outlive a crashed node by this much (seconds). */
export const SNAPSHOT_TTL_SECONDS = 6 * 3600;

/**
 * Whether a restore would act differently after this event: a queued REST call (resumed from its
 * snapshot), and the dialog once there is one (a restored answered call BYEs it). Other changes
 * (ringing, bridges, mute) end the same way on another node, so they cost no write.
 */
function worthWriting(e: CallEmitted): boolean {
  switch (e.type) {
    case 'call.created':
      return e.call.direction === 'outbound-api';
    case 'call.answered':
      return e.call.dialog !== null;
    case 'call.confirmed':
      return e.call.direction === 'inbound';
    default:
      return false;
  }
}

/** A persisted snapshot as it is stored. */
export function storable(persisted: unknown): unknown {
  const s = persisted as { children?: unknown; context?: { credentials?: unknown } };
  return {
    ...s,
    children: {},
    ...(s.context ? { context: { ...s.context, credentials: null } } : {}),
  };
}

/** The snapshot observer; `adopt` marks a call restored here (its stored snapshot is deleted at its end). */
export type SnapshotWriter = CallObserver & { adopt(sid: string): void };

export function snapshotWriter(
  store: SnapshotStore,
  persistedOf: (sid: string) => unknown | null,
  logger: Logger,
): SnapshotWriter {
  /** Calls with a snapshot stored: only those need a delete. */
  const written = new Set<string>();
  const observe: CallObserver = (e) => {
    const sid = e.call.sid;
    if (e.type === 'call.ended')
      return written.delete(sid) ? store.delete('call', sid).catch(() => {}) : undefined;
    if (!worthWriting(e)) return undefined;
    const persisted = persistedOf(sid);
    if (persisted === null) return undefined;
    written.add(sid);
    return store.save('call', sid, storable(persisted), SNAPSHOT_TTL_SECONDS).catch((err) => {
      logger.warn({ err, callSid: sid }, 'call snapshot not saved');
    });
  };
  return Object.assign(observe, { adopt: (sid: string) => void written.add(sid) });
}
