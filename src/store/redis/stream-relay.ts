/** Redis StreamRelay: one pub/sub channel per deployment (the subscriber connection is shared). */
import type { StreamRelay } from '../stream-relay.js';
import type { Redis } from './client.js';

export class RedisStreamRelay implements StreamRelay {
  constructor(
    private readonly pub: Redis,
    private readonly sub: Redis,
    private readonly channel: string,
  ) {}

  async publish(message: string): Promise<void> {
    await this.pub.publish(this.channel, message);
  }

  async subscribe(onMessage: (message: string) => void): Promise<void> {
    await this.sub.subscribe(this.channel, (message) => onMessage(message));
  }
}
