/** Redis implementation of CallAdmissionStore: one Lua script checks both limits atomically. */
import type { AdmissionResult, CallAdmissionStore } from '../call-admission.js';
import type { Redis } from './client.js';
import type { RedisKeys } from './keys.js';

/**
 * KEYS[1] slots zset, KEYS[2] this second's CPS counter
 * ARGV: now ms, lease ms, call sid, max concurrent, per second
 * Returns 1 when admitted, else the milliseconds to wait before trying again.
 */
const ACQUIRE = `
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[3]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
  return 1
end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then
  return -250
end
local n = redis.call('INCR', KEYS[2])
if n == 1 then redis.call('PEXPIRE', KEYS[2], 2000) end
if n > tonumber(ARGV[5]) then
  return -(1000 - (now % 1000))
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
return 1
`;

export class RedisCallAdmission implements CallAdmissionStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly now: () => number = Date.now,
  ) {}

  async tryAcquire(
    accountSid: string,
    callSid: string,
    limits: { maxConcurrent: number; perSecond: number },
    leaseMs: number,
  ): Promise<AdmissionResult> {
    const now = this.now();
    const result = (await this.redis.eval(ACQUIRE, {
      keys: [
        this.keys.accountCallSlots(accountSid),
        this.keys.accountCps(accountSid, Math.floor(now / 1000)),
      ],
      arguments: [
        String(now),
        String(leaseMs),
        callSid,
        String(limits.maxConcurrent),
        String(limits.perSecond),
      ],
    })) as number;
    return result === 1 ? { admitted: true } : { admitted: false, retryAfterMs: Math.max(1, -result) };
  }

  async renew(accountSid: string, callSid: string, leaseMs: number): Promise<void> {
    await this.redis.zAdd(
      this.keys.accountCallSlots(accountSid),
      { score: this.now() + leaseMs, value: callSid },
      { XX: true },
    );
  }

  async release(accountSid: string, callSid: string): Promise<void> {
    await this.redis.zRem(this.keys.accountCallSlots(accountSid), callSid);
  }

  async liveCount(accountSid: string): Promise<number> {
    const key = this.keys.accountCallSlots(accountSid);
    await this.redis.zRemRangeByScore(key, '-inf', this.now());
    return this.redis.zCard(key);
  }
}
