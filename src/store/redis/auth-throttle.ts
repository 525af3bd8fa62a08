/** Redis implementation of AuthThrottleStore: fixed-window counters, one Lua call per step. */
import type { AuthThrottleStore, ThrottleLimits, ThrottleState, ThrottleSubject } from '../auth-throttle.js';
import type { Redis } from './client.js';
import type { RedisKeys } from './keys.js';

/**
 * KEYS[1] identity counter, KEYS[2] source counter
 * ARGV: identity limit, source limit, window ms, count (1 to record a failure, 0 to only read)
 * Returns the milliseconds each key stays blocked (0 when it is not).
 */
const STEP = `
local blocked = {0, 0}
for i = 1, 2 do
  local n
  if ARGV[4] == '1' then
    n = redis.call('INCR', KEYS[i])
    if n == 1 then redis.call('PEXPIRE', KEYS[i], tonumber(ARGV[3])) end
  else
    n = tonumber(redis.call('GET', KEYS[i]) or '0')
  end
  if n >= tonumber(ARGV[i]) then
    local ttl = redis.call('PTTL', KEYS[i])
    if ttl < 0 then
      redis.call('PEXPIRE', KEYS[i], tonumber(ARGV[3]))
      ttl = tonumber(ARGV[3])
    end
    blocked[i] = ttl
  end
end
return blocked
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
    const result = await this.redis.eval(STEP, {
      keys: [this.keys.authFailuresIdentity(subject.identity), this.keys.authFailuresSource(subject.source)],
      arguments: [
        String(limits.identityFailures),
        String(limits.sourceFailures),
        String(limits.windowMs),
        count ? '1' : '0',
      ],
    });
    const [identityMs, sourceMs] = result as [number, number];
    return { identityMs: Number(identityMs), sourceMs: Number(sourceMs) };
  }
}
