/** Account change notices between nodes over Redis pub/sub (evict the cached record). */
import type { AccountChangeBus } from '../account-store.js';
import type { Redis } from './client.js';

export class RedisAccountBus implements AccountChangeBus {
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
