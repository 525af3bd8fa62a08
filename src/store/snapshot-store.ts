/**
 * Snapshot store port: live actor snapshots (XState `getPersistedSnapshot()`), keyed by actor kind
 * and sid. Redis implementation in src/store/redis/snapshot-store.ts.
 */
export type ActorKind = 'account' | 'call' | 'sms' | 'gateway';

export interface SnapshotStore {
  save(kind: ActorKind, sid: string, snapshot: unknown, ttlSeconds?: number): Promise<void>;
  load<T = unknown>(kind: ActorKind, sid: string): Promise<T | null>;
  delete(kind: ActorKind, sid: string): Promise<void>;
}
