/**
 * Change notices between nodes over Redis pub/sub, one channel per kind (accounts, incoming numbers):
 * each node forgets its cached copy of what a notice names.
 */
import type { AccountChangeBus } from '../account-store.js';
import type { Redis } from './client.js';

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
}
