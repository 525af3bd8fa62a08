/**
 * Redis RegistrationStore: one hash per AOR (field = contact URI, value = binding JSON), a sorted set
 * of AORs scored by their latest expiry (for the registered-user count), and the one digest secret all nodes sign nonces with.
 */
import { randomBytes } from 'node:crypto';
import type { Binding, RegistrationStore } from '../registration-store.js';
import type { Redis } from './client.js';
import type { RedisKeys } from './keys.js';

/**
 * KEYS[1] AOR hash, KEYS[2] AOR index zset. ARGV[1] now ms, ARGV[2] AOR, ARGV[3] JSON array of
 * bindings to upsert, ARGV[4] JSON array of contacts to remove. Returns the live bindings (JSON).
 */
const APPLY = `
local now = tonumber(ARGV[1])
for _, c in ipairs(cjson.decode(ARGV[4])) do redis.call('HDEL', KEYS[1], c) end
for _, b in ipairs(cjson.decode(ARGV[3])) do redis.call('HSET', KEYS[1], b.contact, cjson.encode(b)) end
local all = redis.call('HGETALL', KEYS[1])
local live = {}
local latest = 0
for i = 1, #all, 2 do
  local b = cjson.decode(all[i + 1])
  if b.expiresAt <= now then
    redis.call('HDEL', KEYS[1], all[i])
  else
    table.insert(live, all[i + 1])
    if b.expiresAt > latest then latest = b.expiresAt end
  end
end
if latest > 0 then
  redis.call('PEXPIREAT', KEYS[1], latest)
  redis.call('ZADD', KEYS[2], latest, ARGV[2])
else
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[2], ARGV[2])
end
return live
`;

export class RedisRegistrationStore implements RegistrationStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly now: () => number = Date.now,
  ) {}

  async list(aor: string): Promise<Binding[]> {
    const all = await this.redis.hVals(this.keys.sipBindings(aor));
    const now = this.now();
    return all.map((v) => JSON.parse(v) as Binding).filter((b) => b.expiresAt > now);
  }

  async apply(aor: string, upsert: readonly Binding[], remove: readonly string[]): Promise<Binding[]> {
    const live = (await this.redis.eval(APPLY, {
      keys: [this.keys.sipBindings(aor), this.keys.sipBindingIndex],
      arguments: [String(this.now()), aor, JSON.stringify(upsert), JSON.stringify(remove)],
    })) as string[];
    return live.map((v) => JSON.parse(v) as Binding);
  }

  async clear(aor: string): Promise<void> {
    await this.redis.multi().del(this.keys.sipBindings(aor)).zRem(this.keys.sipBindingIndex, aor).exec();
  }

  async countRegistered(): Promise<number> {
    const now = this.now();
    await this.redis.zRemRangeByScore(this.keys.sipBindingIndex, '-inf', now);
    return this.redis.zCard(this.keys.sipBindingIndex);
  }

  async digestSecret(): Promise<string> {
    const key = this.keys.sipDigestSecret;
    await this.redis.set(key, randomBytes(32).toString('hex'), { NX: true });
    const secret = await this.redis.get(key);
    if (!secret) throw new Error('digest secret missing');
    return secret;
  }
}
