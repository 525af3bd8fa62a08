/**
 * Redis RegistrationStore: one hash per AOR (field = contact URI, value = binding JSON), sorted sets
 * of AORs scored by their latest expiry (for the registered-user count; one per shard, in the slot of
 * its AORs' hashes), and the one digest secret all nodes sign nonces with.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Binding, RegistrationStore } from '../registration-store.js';
import type { Redis } from './client.js';
import { type RedisKeys, registrationShard } from './keys.js';

/**
 * KEYS[1] AOR hash, KEYS[2] the AOR's index shard zset. ARGV[1] now ms, ARGV[2] AOR, ARGV[3] most contacts,
 * ARGV[4] how many contacts to remove, then those contacts, then the upserts as (contact, binding
 * JSON up to the value of its last key `registeredAt`, registeredAt, expiresAt) quadruples. Drops
 * expired bindings it meets (expiry is lazy: nothing sweeps). Returns the live bindings, or false,
 * writing nothing, when there would be more than ARGV[3]: an upserted one as {contact, registeredAt}
 * (the caller has the rest), any other as its JSON.
 *
 * The two numbers it needs of a stored binding are read with a pattern, not by decoding its JSON,
 * and a refreshed binding takes its kept registeredAt by concatenation, not by decoding and encoding
 * again: the JSON work was most of the script's time, and Redis shares the registrar's cores. The
 * patterns cannot match inside a string value (JSON escapes every quote there), and take a number in
 * any JSON form (bindings the earlier script wrote went through cjson).
 */
const APPLY = `
local now = tonumber(ARGV[1])
local nremove = tonumber(ARGV[4])
local all = redis.call('HGETALL', KEYS[1])
local live = {}
local gone = {}
for i = 1, #all, 2 do
  local json = all[i + 1]
  local expiresAt = tonumber(string.match(json, '"expiresAt":([-+.%deE]+)'))
  if expiresAt and expiresAt > now then live[all[i]] = { json = json, expiresAt = expiresAt } else table.insert(gone, all[i]) end
end
for i = 5, 4 + nremove do
  live[ARGV[i]] = nil
  table.insert(gone, ARGV[i])
end
local set = {}
for i = 5 + nremove, #ARGV, 4 do
  local contact, registeredAt = ARGV[i], ARGV[i + 2]
  local old = live[contact]
  if old and not old.upserted then
    registeredAt = string.match(old.json, '"registeredAt":([-+.%deE]+)') or registeredAt
  elseif old then
    registeredAt = old.registeredAt
  end
  live[contact] = { upserted = true, registeredAt = registeredAt, expiresAt = tonumber(ARGV[i + 3]) }
  table.insert(set, contact)
  table.insert(set, ARGV[i + 1] .. registeredAt .. '}')
end
local out = {}
local latest = 0
for contact, e in pairs(live) do
  if e.upserted then table.insert(out, { contact, e.registeredAt }) else table.insert(out, e.json) end
  if e.expiresAt > latest then latest = e.expiresAt end
end
if #out > tonumber(ARGV[3]) then return false end
if #gone > 0 then redis.call('HDEL', KEYS[1], unpack(gone)) end
if #set > 0 then redis.call('HSET', KEYS[1], unpack(set)) end
if latest > 0 then
  redis.call('PEXPIREAT', KEYS[1], latest)
  redis.call('ZADD', KEYS[2], latest, ARGV[2])
else
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[2], ARGV[2])
end
return out
`;
const APPLY_SHA = createHash('sha1').update(APPLY).digest('hex');

/**
 * A binding's JSON without the value of `registeredAt`, its last key, and the closing brace: the
 * script ends it with the registeredAt it keeps. JSON.stringify(b) is cut when the key is last
 * already (the registrar writes it so), else the key is moved last.
 */
function jsonHead(b: Binding): string {
  const json = JSON.stringify(b);
  const tail = `"registeredAt":${b.registeredAt}}`;
  if (json.endsWith(tail) && json.length > tail.length)
    return json.slice(0, -(tail.length - '"registeredAt":'.length));
  const { registeredAt: _, ...rest } = b;
  const head = JSON.stringify(rest);
  return `${head.slice(0, -1)}${head.length > 2 ? ',' : ''}"registeredAt":`;
}

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

  async apply(
    aor: string,
    upsert: readonly Binding[],
    remove: readonly string[],
    maxContacts: number,
  ): Promise<Binding[] | null> {
    const args = [String(this.now()), aor, String(maxContacts), String(remove.length), ...remove];
    for (const b of upsert) args.push(b.contact, jsonHead(b), String(b.registeredAt), String(b.expiresAt));
    const options = {
      keys: [this.keys.sipBindings(aor), this.keys.sipBindingIndex(registrationShard(aor))],
      arguments: args,
    };
    // The script by its hash (a REGISTER sends a few hundred bytes, not the script); loaded on first
    // use and again after a Redis restart.
    let live: unknown;
    try {
      live = await this.redis.evalSha(APPLY_SHA, options);
    } catch (e) {
      if (!String((e as Error)?.message).startsWith('NOSCRIPT')) throw e;
      live = await this.redis.eval(APPLY, options);
    }
    if (!Array.isArray(live)) return null;
    // The upserted bindings come back as their contact and kept registeredAt only: no JSON to parse.
    return live.map((v) => {
      if (!Array.isArray(v)) return JSON.parse(String(v)) as Binding;
      // The last of a contact sent twice is the one written.
      const sent = upsert.findLast((b) => b.contact === String(v[0])) as Binding;
      const registeredAt = Number(v[1]);
      return sent.registeredAt === registeredAt ? sent : { ...sent, registeredAt };
    });
  }

  async clear(aor: string): Promise<void> {
    const index = this.keys.sipBindingIndex(registrationShard(aor));
    await this.redis.multi().del(this.keys.sipBindings(aor)).zRem(index, aor).exec();
  }

  async countRegistered(): Promise<number> {
    const now = this.now();
    const counts = await Promise.all(
      this.keys.sipBindingIndexes().map(async (index) => {
        await this.redis.zRemRangeByScore(index, '-inf', now);
        return this.redis.zCard(index);
      }),
    );
    return counts.reduce((a, b) => a + b, 0);
  }

  async digestSecret(): Promise<string> {
    const key = this.keys.sipDigestSecret;
    await this.redis.set(key, randomBytes(32).toString('hex'), { NX: true });
    const secret = await this.redis.get(key);
    if (!secret) throw new Error('digest secret missing');
    return secret;
  }
}
