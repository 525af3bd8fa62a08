/**
 * Redis implementation of ConferenceOwnerStore: the room claim is one key (value: the holder's
 * instance id, with a PX expiry) checked and set in one script; a conference sid's location is a
 * key the owner refreshes with its claim; the end mark is a SET NX.
 */
import type { ConferenceEnding, ConferenceOwnerStore } from '../conference-owner-store.js';
import type { Redis } from './client.js';
import type { RedisKeys } from './keys.js';

/** KEYS[1] room; ARGV node, ttl ms. Returns the holder afterwards. */
const CLAIM = `
local current = redis.call('GET', KEYS[1])
if current == false or current == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', tonumber(ARGV[2]))
  return ARGV[1]
end
return current
`;

/** KEYS[1] room; ARGV node. Deletes only the holder's own claim. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/** How long an end mark is kept: far beyond any lease, so a late survivor still finds it. */
const ENDED_TTL_SECONDS = 24 * 3600;

export class RedisConferenceOwners implements ConferenceOwnerStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  async claim(room: string, node: string, ttlMs: number): Promise<string> {
    const holder = await this.redis.eval(CLAIM, {
      keys: [this.keys.conferenceRoom(room)],
      arguments: [node, String(ttlMs)],
    });
    return String(holder);
  }

  ownerOf(room: string): Promise<string | null> {
    return this.redis.get(this.keys.conferenceRoom(room));
  }

  async release(room: string, node: string): Promise<void> {
    await this.redis.eval(RELEASE, { keys: [this.keys.conferenceRoom(room)], arguments: [node] });
  }

  async locate(sid: string, node: string, room: string, ttlMs: number): Promise<void> {
    await Promise.all([
      this.redis.set(this.keys.conferenceLocation(sid), JSON.stringify({ node, room }), { PX: ttlMs }),
      this.redis.zAdd(this.keys.conferencesLive(), { score: Date.now() + ttlMs, value: sid }),
    ]);
  }

  async whereIs(sid: string): Promise<{ node: string; room: string } | null> {
    const raw = await this.redis.get(this.keys.conferenceLocation(sid));
    if (raw === null) return null;
    try {
      const v = JSON.parse(raw) as { node?: unknown; room?: unknown };
      return typeof v.node === 'string' && typeof v.room === 'string' ? { node: v.node, room: v.room } : null;
    } catch {
      return null;
    }
  }

  async markEnded(sid: string): Promise<boolean> {
    const set = await this.redis.set(this.keys.conferenceEnded(sid), '1', {
      NX: true,
      EX: ENDED_TTL_SECONDS,
    });
    return set === 'OK';
  }

  async noteEnding(ending: ConferenceEnding): Promise<void> {
    await this.redis.set(this.keys.conferenceEnding(ending.sid), JSON.stringify(ending), {
      EX: ENDED_TTL_SECONDS,
    });
  }

  async endingOf(sid: string): Promise<ConferenceEnding | null> {
    const raw = await this.redis.get(this.keys.conferenceEnding(sid));
    if (raw === null) return null;
    try {
      const v = JSON.parse(raw) as Partial<ConferenceEnding>;
      return v.sid === sid && typeof v.accountSid === 'string' && typeof v.friendlyName === 'string'
        ? {
            sid,
            accountSid: v.accountSid,
            friendlyName: v.friendlyName,
            statusCallback: v.statusCallback ?? null,
            sequence: typeof v.sequence === 'number' ? v.sequence : 0,
          }
        : null;
    } catch {
      return null;
    }
  }

  expired(now: number, limit: number): Promise<string[]> {
    return this.redis.zRangeByScore(this.keys.conferencesLive(), 0, now, {
      LIMIT: { offset: 0, count: limit },
    });
  }

  async unlist(sid: string): Promise<void> {
    await this.redis.zRem(this.keys.conferencesLive(), sid);
  }

  async forget(sid: string): Promise<void> {
    await Promise.all([
      this.redis.zRem(this.keys.conferencesLive(), sid),
      this.redis.del(this.keys.conferenceEnding(sid)),
    ]);
  }
}
