/** Gateway changes over Redis pub/sub, so every node's registration actors follow them. */
import type { GatewayChange } from '../gateway-store.js';
import type { GatewayBus } from '../postgres/gateway-repository.js';
import type { Redis } from './client.js';

export class RedisGatewayBus implements GatewayBus {
  private readonly listeners = new Set<(change: GatewayChange) => void>();
  private subscribed: Promise<void> | null = null;

  constructor(
    private readonly pub: Redis,
    private readonly sub: Redis,
    private readonly channel: string,
  ) {}

  /** Subscribes the shared connection once; call before the first publish so no change is missed. */
  start(): Promise<void> {
    this.subscribed ??= this.sub.subscribe(this.channel, (message) => {
      let change: GatewayChange;
      try {
        change = revive(JSON.parse(message) as GatewayChange);
      } catch {
        return;
      }
      for (const l of this.listeners) l(change);
    });
    return this.subscribed;
  }

  async publish(change: GatewayChange): Promise<void> {
    await this.pub.publish(this.channel, JSON.stringify(change));
  }

  subscribe(listener: (change: GatewayChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

function revive(change: GatewayChange): GatewayChange {
  if (change.kind !== 'upsert') return change;
  const g = change.gateway;
  return {
    kind: 'upsert',
    gateway: { ...g, dateCreated: new Date(g.dateCreated), dateUpdated: new Date(g.dateUpdated) },
  };
}
