/**
 * Call snapshots in Redis, written from the call's domain events: what another node needs to
 * restore the call if this one dies (docs/calls.md, recovery). A snapshot is the actor's persisted
 * snapshot without its invoked children (their work lived on the node that died; the restored
 * actor re-invokes what it still needs) and without credentials (never stored).
 */
import type { Logger } from '../../logger.js';
import type { SnapshotStore } from '../../store/snapshot-store.js';
import type { CallEmitted } from './call.types.js';
import type { CallObserver } from './call-observers.js';

/** Live call snapshots outlive a crashed node by this much (seconds). */
export const SNAPSHOT_TTL_SECONDS = 6 * 3600;

/**
 * Whether a restore would act differently after this event: a queued REST call (resumed from its
 * snapshot), and the dialog once there is one (a restored answered call BYEs it). Other changes
 * (ringing, bridges, mute) end the same way on another node, so they cost no write.
 */
function worthWriting(e: CallEmitted): boolean {
  switch (e.type) {
    case 'call.created':
      return e.call.origin.direction === 'outbound-api';
    case 'call.answered':
      return e.call.sip.dialog !== null;
    case 'call.confirmed':
      return e.call.origin.direction === 'inbound';
    default:
      return false;
  }
}

/** A persisted snapshot as it is stored. */
export function storable(persisted: unknown): unknown {
  const s = persisted as { children?: unknown; context?: { origin?: object } };
  const c = s.context;
  return {
    ...s,
    children: {},
    ...(c?.origin ? { context: { ...c, origin: { ...c.origin, credentials: null } } } : {}),
  };
}

/** The members of a flat context (stored before `origin`, `sip` and `media` grouped them) by group. */
const ORIGIN_KEYS = [
  'sid',
  'accountSid',
  'direction',
  'from',
  'to',
  'parentCallSid',
  'apiVersion',
  'phoneNumberSid',
  'callerName',
  'forwardedFrom',
  'createdAt',
  'timeoutSeconds',
  'markup',
  'progress',
  'numberCallback',
  'credentials',
  'channel',
] as const;
const SIP_KEYS = {
  sipOutcome: 'outcome',
  dialog: 'dialog',
  confirmed: 'confirmed',
  finalResponse: 'finalResponse',
};
const MEDIA_KEYS = ['remoteSdp', 'localSdp', 'room', 'muted'] as const;

/**
 * A stored snapshot as this version restores it: one stored by a node of the previous version (its
 * context flat, for up to SNAPSHOT_TTL_SECONDS after an upgrade) gets the grouped context.
 */
export function restorable<T>(stored: T): T {
  const s = stored as { context?: Record<string, unknown> } | null;
  const flat = s?.context;
  if (!flat || 'origin' in flat || typeof flat.sid !== 'string') return stored;
  const rest: Record<string, unknown> = { ...flat };
  const take = (key: string) => {
    const v = rest[key];
    delete rest[key];
    return v;
  };
  const origin: Record<string, unknown> = {};
  for (const k of ORIGIN_KEYS) {
    const v = take(k);
    if (v !== undefined) origin[k] = v;
  }
  const sip: Record<string, unknown> = { finalResponse: null };
  for (const [k, to] of Object.entries(SIP_KEYS)) {
    const v = take(k);
    if (v !== undefined) sip[to] = v;
  }
  const media: Record<string, unknown> = {};
  for (const k of MEDIA_KEYS) media[k] = take(k);
  return { ...s, context: { origin, sip, media, ...rest } } as T;
}

/**
 * The snapshot observer; `adopt` marks a call restored here (its stored snapshot is deleted at its
 * end); `flush` writes what is due now (a node stopping without a drain leaves its calls to be
 * restored elsewhere, so their newest snapshots must be stored before its connections close).
 */
export type SnapshotWriter = CallObserver & { adopt(sid: string): void; flush(): Promise<void> };

/**
 * Snapshot writes and deletes of this long go to Redis together (one socket write for the window's
 * SETs and DELs instead of one each). A node that dies within the window loses the newest
 * snapshots, as it loses the writes in flight: those calls are closed by the claim sweep instead.
 */
export const SNAPSHOT_FLUSH_MS = 20;

export function snapshotWriter(
  store: SnapshotStore,
  persistedOf: (sid: string) => unknown | null,
  logger: Logger,
  flushMs = SNAPSHOT_FLUSH_MS,
): SnapshotWriter {
  /** Calls with a snapshot stored: only those need a delete. */
  const written = new Set<string>();
  /** Calls whose snapshot is written at the next flush (as it is then: the newest state). */
  const due = new Set<string>();
  /** Calls whose stored snapshot is deleted at the next flush. */
  const ended = new Set<string>();
  let timer: NodeJS.Timeout | null = null;
  const flush = (): Promise<unknown> => {
    if (timer) clearTimeout(timer);
    timer = null;
    const writes: Promise<unknown>[] = [];
    for (const sid of ended) writes.push(store.delete('call', sid).catch(() => {}));
    ended.clear();
    for (const sid of due) {
      const persisted = persistedOf(sid);
      if (persisted === null) continue;
      written.add(sid);
      writes.push(
        store.save('call', sid, storable(persisted), SNAPSHOT_TTL_SECONDS).catch((err) => {
          logger.warn({ err, callSid: sid }, 'call snapshot not saved');
        }),
      );
    }
    due.clear();
    return Promise.all(writes);
  };
  const schedule = () => {
    timer ??= setTimeout(flush, flushMs);
    // Not a reason to keep the process up: what a stopped node has not written is lost anyway.
    timer.unref();
  };
  const observe: CallObserver = (e) => {
    const sid = e.call.origin.sid;
    if (e.type === 'call.ended') {
      // A call that ends before its first write never had its snapshot stored.
      due.delete(sid);
      if (written.delete(sid)) {
        ended.add(sid);
        schedule();
      }
      return undefined;
    }
    if (!worthWriting(e)) return undefined;
    due.add(sid);
    schedule();
    return undefined;
  };
  return Object.assign(observe, {
    adopt: (sid: string) => void written.add(sid),
    flush: async () => void (await flush()),
  });
}
