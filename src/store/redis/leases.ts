/** Redis implementation of LeaseStore: one key per lease, value = holder, checked and set in one script. */
import type { LeaseStore } from '../lease-store.js';
import type { Redis } from './client.js';
import type { RedisKeys } from './keys.js';

/** KEYS[1] lease; ARGV holder, ttl ms. 1 when held by ARGV[1] afterwards. */
const ACQUIRE = `
local current = redis.call('GET', KEYS[1])
if current == false or current == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', tonumber(ARGV[2]))
  return 1
end
return 0
`;

/** KEYS[1] lease; ARGV holder. Deletes only the holder's own lease. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

export class RedisLeases implements LeaseStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  async acquire(name: string, holder: string, ttlMs: number): Promise<boolean> {
    const held = await this.redis.eval(ACQUIRE, {
      keys: [this.keys.lease(name)],
      arguments: [holder, String(ttlMs)],
    });
    return held === 1;
  }

  async release(name: string, holder: string): Promise<void> {
    await this.redis.eval(RELEASE, { keys: [this.keys.lease(name)], arguments: [holder] });
  }
}
