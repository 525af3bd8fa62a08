/**
 * Redis SupervisorFigureStore: one hash, field = instance id, value = the node's figures as JSON
 * with their expiry. Few fields (one per node), so reading them all is one HGETALL; expired ones are
 * skipped and removed on read.
 */
import type { NodeFigures, SupervisorFigureStore } from '../supervisor-figures.js';
import type { Redis } from './client.js';
import type { RedisKeys } from './keys.js';

interface Stored extends NodeFigures {
  readonly expiresAt: number;
}

export class RedisSupervisorFigures implements SupervisorFigureStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly now: () => number = Date.now,
  ) {}

  async publish(node: NodeFigures, ttlMs: number): Promise<void> {
    const stored: Stored = { ...node, expiresAt: node.at + ttlMs };
    await this.redis.hSet(this.keys.supervisorNodes, node.instanceId, JSON.stringify(stored));
  }

  async list(): Promise<NodeFigures[]> {
    const all = await this.redis.hGetAll(this.keys.supervisorNodes);
    const now = this.now();
    const live: NodeFigures[] = [];
    const expired: string[] = [];
    for (const [id, json] of Object.entries(all)) {
      const s = JSON.parse(json) as Stored;
      if (s.expiresAt <= now) expired.push(id);
      else live.push({ instanceId: s.instanceId, at: s.at, figures: s.figures });
    }
    if (expired.length) await this.redis.hDel(this.keys.supervisorNodes, expired);
    return live.sort((a, b) => a.instanceId.localeCompare(b.instanceId));
  }

  async remove(instanceId: string): Promise<void> {
    await this.redis.hDel(this.keys.supervisorNodes, instanceId);
  }
}
