/**
 * The live stream on demand (stream-demand.ts): nodes on one relay number, keep and relay call
 * deltas only while some node has a subscriber. A node with none relays nothing of its calls but
 * keeps them for the next snapshot; a subscriber on another node makes it send its live calls and
 * then its deltas; the last subscriber gone, a grace keeps resume exact, then the node stops and a
 * client resuming across the stop gets a snapshot; a watcher that stops announcing is forgotten.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { initialContext } from '../../../../src/actors/call/call.setup.js';
import type { CallContext, CallEmitted } from '../../../../src/actors/call/call.types.js';
import { LiveStream } from '../../../../src/actors/supervision/live-stream.js';

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const ACCOUNT = 'AC00000000000000000000000000000001';
const ANNOUNCE_MS = 1_000;
const GRACE_MS = 10_000;

function call(sid: string): CallContext {
  return initialContext({
    sid,
    accountSid: ACCOUNT,
    direction: 'inbound',
    from: '+15550001111',
    to: '+15550002222',
    apiVersion: '2012-04-24',
    createdAt: T0,
  });
}

const created = (sid: string): CallEmitted => ({ type: 'call.created', call: call(sid), at: T0 });
const answered = (sid: string): CallEmitted => ({
  type: 'call.answered',
  call: { ...call(sid), answeredAt: T0 + 1000 },
  at: T0 + 1000,
});
const ended = (sid: string): CallEmitted => ({
  type: 'call.ended',
  call: { ...call(sid), answeredAt: T0 + 1000, endedAt: T0 + 5000 },
  status: 'completed',
  cause: 'local-hangup',
  sipStatus: null,
  duration: 4,
  at: T0 + 5000,
});

/** Nodes on one pub/sub channel: every message reaches every node, the sender included. */
function cluster(...nodes: string[]) {
  const wire: string[] = [];
  const all: LiveStream[] = [];
  /** Every message published, in order (what the channel carried). */
  const log: string[] = [];
  const streams = nodes.map((node) => {
    const s = new LiveStream({
      node,
      relay: (m) => {
        wire.push(m);
        log.push(m);
      },
      metrics: () => ({}),
      onDemand: { announceMs: ANNOUNCE_MS, graceMs: GRACE_MS },
    });
    all.push(s);
    return s;
  });
  /** Flushes every node's window and delivers what is on the wire until it is quiet. */
  const settle = async () => {
    await Promise.resolve(); // the hellos
    for (;;) {
      for (const s of all) s.flush();
      const batch = wire.splice(0);
      if (batch.length === 0) return;
      for (const m of batch) for (const s of all) s.applyRemote(m);
    }
  };
  return { streams, settle, log };
}

const parse = (frames: readonly string[]) => frames.flatMap((f) => JSON.parse(f));
const deltas = (log: readonly string[]) =>
  log.flatMap((m) => (JSON.parse(m) as { deltas?: unknown[] }).deltas ?? []);

describe('LiveStream on demand', () => {
  beforeEach(() => {
    vi.useFakeTimers({
      now: T0,
      toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'],
    });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('relays and numbers nothing of its calls while no node watches, yet snapshots them', async () => {
    const { streams, settle, log } = cluster('ID-A', 'ID-B');
    const [a] = streams as [LiveStream, LiveStream];
    await settle();
    a.observe(created('CA1'));
    a.observe(answered('CA1'));
    a.observe(created('CA2'));
    a.observe(ended('CA2'));
    await settle();
    expect(a.publishing).toBe(false);
    expect(a.lastSeq).toBe(0);
    expect(deltas(log)).toEqual([]);
    // The snapshot of a first subscriber still shows the live call as it stands.
    const sub = a.subscribe(undefined, () => {});
    const [snap] = parse(sub.initial);
    expect(snap.calls.map((c: { sid: string; status: string }) => [c.sid, c.status])).toEqual([
      ['CA1', 'in-progress'],
    ]);
  });

  it('a subscriber on one node gets the live calls of another, then its deltas', async () => {
    const { streams, settle } = cluster('ID-A', 'ID-B');
    const [a, b] = streams as [LiveStream, LiveStream];
    await settle();
    a.observe(created('CA1'));
    a.observe(answered('CA1'));
    const seen: string[] = [];
    b.subscribe(undefined, (f) => seen.push(f));
    expect(a.publishing).toBe(false); // until B's announcement reaches it
    await settle();
    expect(a.publishing).toBe(true);
    a.observe(created('CA2'));
    a.observe(ended('CA1'));
    await settle();
    const frames = parse(seen);
    expect(frames.map((f) => [f.type, f.call.sid, f.status ?? f.call.status])).toEqual([
      ['call.created', 'CA1', 'in-progress'], // from A's sync: the call as it stands
      ['call.created', 'CA2', 'ringing'],
      ['call.ended', 'CA1', 'completed'],
    ]);
    // In B's own sequence, with no gap.
    expect(frames.map((f) => f.seq)).toEqual([1, 2, 3]);
  });

  it('keeps resume exact during the grace, then stops and resumes with a snapshot', async () => {
    const { streams, settle, log } = cluster('ID-A', 'ID-B');
    const [a, b] = streams as [LiveStream, LiveStream];
    await settle();
    const first = a.subscribe(undefined, () => {});
    await settle();
    expect(b.publishing).toBe(true);
    first.unsubscribe();
    a.observe(created('CA1'));
    await settle();
    // Within the grace: a client coming back gets exactly what it missed.
    const back = a.subscribe(undefined, () => {}, 0);
    expect(back.resumed).toBe(true);
    expect(parse(back.initial).map((f) => [f.type, f.seq])).toEqual([['call.created', 1]]);
    back.unsubscribe();
    vi.advanceTimersByTime(GRACE_MS + 1);
    await settle();
    expect(a.publishing).toBe(false);
    expect(b.publishing).toBe(false);
    const relayed = deltas(log).length;
    a.observe(answered('CA1'));
    b.observe(created('CB1'));
    await settle();
    expect(deltas(log)).toHaveLength(relayed);
    // Across the stop: a snapshot, never a silent gap.
    const late = a.subscribe(undefined, () => {}, 1);
    expect(late.resumed).toBe(false);
    const [snap] = parse(late.initial);
    expect(snap.calls.map((c: { sid: string; status: string }) => [c.sid, c.status])).toEqual([
      ['CA1', 'in-progress'],
    ]);
    // B's call reaches A's new subscriber from B's sync.
    const seen: string[] = [];
    a.subscribe(undefined, (f) => seen.push(f));
    await settle();
    expect(parse(seen).map((f) => [f.type, f.call.sid])).toEqual([['call.created', 'CB1']]);
  });

  it('forgets a watcher that stops announcing, and answers a starting node at once', async () => {
    const wire: string[] = [];
    const a = new LiveStream({
      node: 'ID-A',
      relay: (m) => wire.push(m),
      metrics: () => ({}),
      onDemand: { announceMs: ANNOUNCE_MS, graceMs: GRACE_MS },
    });
    a.applyRemote('{"node":"ID-B","watching":true}');
    expect(a.publishing).toBe(true);
    expect(wire.at(-1)).toBe('{"node":"ID-A","sync":[]}');
    vi.advanceTimersByTime(2 * ANNOUNCE_MS);
    a.applyRemote('{"node":"ID-B","watching":true}'); // still there
    a.observe(created('CA1'));
    vi.advanceTimersByTime(3 * ANNOUNCE_MS - 1);
    expect(a.publishing).toBe(true);
    vi.advanceTimersByTime(ANNOUNCE_MS + 1);
    expect(a.publishing).toBe(false);
    expect(a.lastSeq).toBe(2); // its delta, then the hole
    // A node with a subscriber answers a hello with its announcement.
    a.subscribe(undefined, () => {});
    wire.length = 0;
    a.applyRemote('{"node":"ID-C","hello":true}');
    expect(wire).toEqual(['{"node":"ID-A","watching":true}']);
    a.close();
  });
});
