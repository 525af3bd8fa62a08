/**
 * Change notices between nodes over Redis pub/sub, one channel per kind (accounts, incoming numbers):
 * each node forgets its cached copy of what a notice names.
 */
import type { AccountChangeBus } from '../account-store.js';
import { isRedisCluster, type Redis } from './client.js';

export class RedisChangeBus implements AccountChangeBus {
  constructor(
    private readonly pub: Redis,
    private readonly sub: Redis,
    private readonly channel: string,
  ) {}

  async publish(sid: string): Promise<void> {
    await this.pub.publish(this.channel, sid);
  }

  async subscribe(onChange: (sid: string) => void): Promise<void> {
    await this.sub.subscribe(this.channel, (message) => onChange(message));
  }

  /**
   * A standalone client says `ready` again after each reconnection, once its subscriptions are
   * acknowledged (node-redis resubscribes before it reports ready): notices published while it was
   * away are lost, later ones arrive. The cluster client reports a node's readiness only the first
   * time, so it cannot tell when its subscriptions are back.
   */
  watchGaps(onGap: () => void): boolean {
    if (isRedisCluster(this.sub)) return false;
    this.sub.on('ready', onGap);
    return true;
  }
}
