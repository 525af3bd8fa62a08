import type { ActorKind, SnapshotStore } from '../snapshot-store.js';
import type { Redis } from './client.js';
import type { RedisKeys } from './keys.js';

export class RedisSnapshotStore implements SnapshotStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  private key(kind: ActorKind, sid: string): string {
    switch (kind) {
      case 'call':
        return this.keys.callSnapshot(sid);
      case 'sms':
        return this.keys.smsSnapshot(sid);
      case 'gateway':
        return this.keys.gatewayState(sid);
    }
  }

  async save(kind: ActorKind, sid: string, snapshot: unknown, ttlSeconds?: number): Promise<void> {
    const value = JSON.stringify(snapshot);
    if (ttlSeconds) await this.redis.set(this.key(kind, sid), value, { EX: ttlSeconds });
    else await this.redis.set(this.key(kind, sid), value);
  }

  async load<T = unknown>(kind: ActorKind, sid: string): Promise<T | null> {
    const raw = await this.redis.get(this.key(kind, sid));
    if (raw === null) return null;
    try {
      return JSON.parse(raw) as T;
    } catch {
      return null;
    }
  }

  async delete(kind: ActorKind, sid: string): Promise<void> {
    await this.redis.del(this.key(kind, sid));
  }
}
