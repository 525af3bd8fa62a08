import { hash } from 'node:crypto';

/**
 * The one Redis key builder. Every key starts with the deployment prefix (REDIS_PREFIX) so several
 * deployments or test runs can share one Redis. Add new keys here, grouped by aggregate.
 *
 * Redis Cluster: keys that one script or transaction touches together carry the same hash tag
 * (`{…}`), so they live in one slot; keys only ever used alone carry none and spread over the cluster.
 */
export function redisKeys(prefix: string) {
  const p = `${prefix}:`;
  return {
    prefix: p,
    /** Pattern matching every key of this deployment (tests clean up with it). */
    all: `${p}*`,
    // accounts
    accountChannel: `${p}chan:account`,
    /** Incoming numbers changed (their e164, or `*`): nodes forget cached routing lookups. */
    numberChannel: `${p}chan:number`,
    /** Profile links changed: nodes forget cached effective-profile lookups. */
    profileLinkChannel: `${p}chan:profile-link`,
    /** Clients of an account changed (its sid): nodes forget the registrar's cached credentials. */
    clientChannel: `${p}chan:client`,
    /** Failed logins of one identity (an opaque hash) in the current throttle window. */
    authFailuresIdentity: (identity: string) => `${p}auth:fail:id:${identity}`,
    /** Failed logins from one client address in the current throttle window. */
    authFailuresSource: (address: string) => `${p}auth:fail:ip:${address}`,
    // SIP registrar
    sipDigestSecret: `${p}sip:digest-secret`,
    /** An AOR's bindings; written together with its shard's index (same hash tag). */
    sipBindings: (aor: string) => `${p}sip:reg:{reg:${registrationShard(aor)}}:${aor}`,
    /** Sorted set of one shard's AORs scored by their latest expiry (the registered count sums them). */
    sipBindingIndex: (shard: number) => `${p}sip:reg:{reg:${shard}}:index`,
    sipBindingIndexes: (): string[] =>
      Array.from({ length: REGISTRATION_SHARDS }, (_, i) => `${p}sip:reg:{reg:${i}}:index`),
    gatewayState: (sid: string) => `${p}gw:${sid}:state`,
    gatewayChannel: `${p}chan:gateway`,
    /** A named lease (value: the holder's instance id), e.g. who registers a gateway. */
    lease: (name: string) => `${p}lease:${name}`,
    // calls
    callSnapshot: (sid: string) => `${p}call:${sid}:snap`,
    /** Sorted set of the account's live call slots (member call sid, score lease expiry ms). */
    accountCallSlots: (accountSid: string) => `${p}{account:${accountSid}}:slots`,
    /** Calls started by the account in one second (epoch seconds), for the CPS limit; slot of the above. */
    accountCps: (accountSid: string, second: number) => `${p}{account:${accountSid}}:cps:${second}`,
    // conferences across nodes
    /** The node that owns a room (`AC…:name`), under a lease it renews. */
    conferenceRoom: (room: string) => `${p}conf:room:${room}`,
    /** Where a live conference runs (JSON node and room), refreshed with its room's claim. */
    conferenceLocation: (sid: string) => `${p}conf:${sid}:at`,
    /** Set once when a conference's record is completed (by its owner or a survivor). */
    conferenceEnded: (sid: string) => `${p}conf:${sid}:ended`,
    /** Live conferences by the time their owner's claim runs out (sorted set, score epoch ms). */
    conferencesLive: () => `${p}conf:live`,
    /** What a survivor needs to end conference `sid` when its owner died (JSON). */
    conferenceEnding: (sid: string) => `${p}conf:${sid}:ending`,
    // nodes
    /** Requests addressed to one node (NodeRpc), and its replies. */
    nodeRequests: (node: string) => `${p}chan:node:${node}:requests`,
    nodeReplies: (node: string) => `${p}chan:node:${node}:replies`,
    // supervision
    /** Hash of every node's supervisor figures (field = instance id). */
    supervisorNodes: `${p}supervisor:nodes`,
    /** A single-use supervisor stream ticket (value: the caller's sid). */
    supervisorTicket: (ticket: string) => `${p}supervisor:ticket:${ticket}`,
    /** Pub/sub channel of the supervisor stream's deltas, every node's. */
    supervisorStreamChannel: `${p}chan:supervisor-stream`,
    // sms
    smsSnapshot: (sid: string) => `${p}sms:${sid}:snap`,
  } as const;
}

export type RedisKeys = ReturnType<typeof redisKeys>;

/**
 * Registrations spread over this many index shards: one global index would put every binding in one
 * cluster slot (its script writes both), while one index per AOR would make the count a cluster scan.
 */
export const REGISTRATION_SHARDS = 16;

/** The index shard of an AOR: stable across nodes and restarts. */
export function registrationShard(aor: string): number {
  // One-shot SHA-1 (no Hash object: this runs for every REGISTER); the first 16 bits, as before.
  return Number.parseInt(hash('sha1', aor, 'hex').slice(0, 4), 16) % REGISTRATION_SHARDS;
}
