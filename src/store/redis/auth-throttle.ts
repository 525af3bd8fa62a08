/** Redis implementation of AuthThrottleStore: fixed-window counters, one Lua call per counter and step. */
import type { AuthThrottleStore, ThrottleLimits, ThrottleState, ThrottleSubject } from '../auth-throttle.js';
import type { Redis } from './client.js';
import type { RedisKeys } from './keys.js';

/**
 * KEYS[1] one counter (identity or source: separate keys, separate cluster slots, so one call each)
 * ARGV: limit, window ms, count (1 to record a failure, 0 to only read)
 * Returns the milliseconds the key stays blocked (0 when it is not).
 */
const STEP = `
local n
if ARGV[3] == '1' then
  n = redis.call('INCR', KEYS[1])
  if n == 1 then redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2])) end
else
  n = tonumber(redis.call('GET', KEYS[1]) or '0')
end
if n < tonumber(ARGV[1]) then return 0 end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
  ttl = tonumber(ARGV[2])
end
return ttl
`;

export class RedisAuthThrottle implements AuthThrottleStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  blockedFor(subject: ThrottleSubject, limits: ThrottleLimits): Promise<ThrottleState> {
    return this.step(subject, limits, false);
  }

  recordFailure(subject: ThrottleSubject, limits: ThrottleLimits): Promise<ThrottleState> {
    return this.step(subject, limits, true);
  }

  async clearIdentity(identity: string): Promise<void> {
    await this.redis.del(this.keys.authFailuresIdentity(identity));
  }

  private async step(
    subject: ThrottleSubject,
    limits: ThrottleLimits,
    count: boolean,
  ): Promise<ThrottleState> {
    const one = async (key: string, limit: number) =>
      Number(
        await this.redis.eval(STEP, {
          keys: [key],
          arguments: [String(limit), String(limits.windowMs), count ? '1' : '0'],
        }),
      );
    const [identityMs, sourceMs] = await Promise.all([
      one(this.keys.authFailuresIdentity(subject.identity), limits.identityFailures),
      one(this.keys.authFailuresSource(subject.source), limits.sourceFailures),
    ]);
    return { identityMs, sourceMs };
  }
}
