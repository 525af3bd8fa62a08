/** Redis StreamTicketStore: one key per ticket with its expiry; GETDEL makes redeeming single use. */
import type { StreamTicketStore } from '../stream-ticket-store.js';
import type { Redis } from './client.js';
import type { RedisKeys } from './keys.js';

export class RedisStreamTickets implements StreamTicketStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  async issue(ticket: string, callerSid: string, ttlMs: number): Promise<void> {
    await this.redis.set(this.keys.supervisorTicket(ticket), callerSid, { PX: ttlMs });
  }

  async redeem(ticket: string): Promise<string | null> {
    return this.redis.getDel(this.keys.supervisorTicket(ticket));
  }
}
