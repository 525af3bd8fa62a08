/**
 * Snapshot store port: live actor snapshots (XState `getPersistedSnapshot()`), keyed by actor kind
 * and sid. Redis implementation in src/store/redis/snapshot-store.ts.
 */
/** Accounts have none: they are Postgres rows (docs/decisions.md, "Accounts are rows with a status machine"). */
export type ActorKind = 'call' | 'sms' | 'gateway';

export interface SnapshotStore {
  save(kind: ActorKind, sid: string, snapshot: unknown, ttlSeconds?: number): Promise<void>;
  load<T = unknown>(kind: ActorKind, sid: string): Promise<T | null>;
  delete(kind: ActorKind, sid: string): Promise<void>;
}
