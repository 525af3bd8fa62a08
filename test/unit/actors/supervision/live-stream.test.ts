/**
 * The live stream fed call events directly: projection of a call into created/updated/ended deltas
 * with growing seq, no delta when nothing visible changed, the snapshot taken at the seq the deltas
 * continue from, resume from the ring (exactly the missed deltas, or a snapshot when they are gone
 * or the seq is unknown), account filtering and metrics frames.
 */
import { describe, expect, it } from 'vitest';
import { initialContext } from '../../../../src/actors/call/call.setup.js';
import type { CallContext, CallEmitted } from '../../../../src/actors/call/call.types.js';
import { type AccountFilter, LiveStream } from '../../../../src/actors/supervision/live-stream.js';

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const ACCOUNT = 'AC00000000000000000000000000000001';
const OTHER = 'AC00000000000000000000000000000002';

function call(sid: string, accountSid = ACCOUNT): CallContext {
  return initialContext({
    sid,
    accountSid,
    direction: 'inbound',
    from: '+15550001111',
    to: '+15550002222',
    apiVersion: '2012-04-24',
    createdAt: T0,
  });
}

function lifecycle(c: CallContext): CallEmitted[] {
  const up = { ...c, answeredAt: T0 + 1000 };
  return [
    { type: 'call.created', call: c, at: T0 },
    { type: 'call.ringing', call: c, at: T0 + 10 },
    { type: 'call.answered', call: up, at: T0 + 1000 },
    // Nothing a supervisor sees changes on confirmation: no delta.
    { type: 'call.confirmed', call: { ...up, sip: { ...up.sip, confirmed: true } }, at: T0 + 1001 },
    { type: 'verb.started', call: up, verb: 'Pause', seq: 1, at: T0 + 1002 },
    { type: 'call.muted', call: { ...up, media: { ...up.media, muted: true } }, muted: true, at: T0 + 1500 },
    { type: 'verb.finished', call: up, verb: 'Pause', seq: 1, outcome: 'done', at: T0 + 5000 },
    {
      type: 'call.ended',
      call: { ...up, endedAt: T0 + 5001 },
      status: 'completed',
      cause: 'local-hangup',
      sipStatus: null,
      duration: 4,
      at: T0 + 5001,
    },
  ];
}

function stream(capacity = 100, node = 'ID-A', relay?: (m: string) => void) {
  return new LiveStream({
    node,
    ...(relay ? { relay } : {}),
    capacity,
    metrics: (a: AccountFilter) => ({ scoped: a !== undefined }),
    now: () => T0,
  });
}

/** Frames as objects, a window's batch (a JSON array) unpacked. */
const parse = (frames: readonly string[]) => frames.flatMap((f) => JSON.parse(f));

describe('LiveStream', () => {
  it('turns a call into created, updated and ended deltas in seq order', () => {
    const s = stream();
    const got: string[] = [];
    const sub = s.subscribe(undefined, (f) => got.push(f));
    expect(parse(sub.initial)).toEqual([
      {
        type: 'snapshot',
        seq: 0,
        at: T0,
        calls: [],
        registrations: [],
        metrics: { scoped: false, RegisteredUsers: 0 },
      },
    ]);
    for (const e of lifecycle(call('CA1'))) s.observe(e);
    expect(got).toEqual([]); // held for the window
    s.flush();
    // The window's deltas in one frame.
    expect(got).toHaveLength(1);
    const frames = parse(got);
    expect(frames.map((f) => [f.type, f.seq])).toEqual([
      ['call.created', 1],
      ['call.updated', 2],
      ['call.updated', 3],
      ['call.updated', 4],
      ['call.updated', 5],
      ['call.updated', 6],
      ['call.ended', 7],
    ]);
    // On the wire: `type`, then `seq`, then the delta's own fields in their order.
    expect(got[0]).toMatch(/^\[\{"type":"call\.created","seq":1,"at":\d+,"call":\{"sid":"CA1",/);
    expect(frames[0].call).toMatchObject({ sid: 'CA1', status: 'ringing', answered: false, verb: null });
    expect(frames[1].call).toMatchObject({ status: 'ringing', lastSipStatus: 180 });
    expect(frames[2].call).toMatchObject({ status: 'in-progress', answered: true, lastSipStatus: 200 });
    expect(frames[3].call.verb).toBe('Pause');
    expect(frames[4].call.muted).toBe(true);
    expect(frames[5].call.verb).toBeNull();
    expect(frames[6]).toMatchObject({
      status: 'completed',
      cause: 'local-hangup',
      duration: 4,
      at: T0 + 5001,
    });
    // An event after the end does not revive the call.
    s.observe({ type: 'call.bridged', call: call('CA1'), peer: 'CA2', at: T0 + 6000 });
    s.flush();
    expect(parse(got)).toHaveLength(7);
    expect(parse([s.snapshot(undefined)])[0]).toMatchObject({ seq: 7, calls: [] });
  });

  it('resumes with exactly the missed deltas, or a snapshot when they are gone or unknown', () => {
    const s = stream(4);
    for (const e of lifecycle(call('CA1')).slice(0, 3)) s.observe(e); // seq 1..3
    const replay = s.subscribe(undefined, () => {}, 1);
    expect(replay.resumed).toBe(true);
    expect(parse(replay.initial).map((f) => f.seq)).toEqual([2, 3]);
    expect(s.subscribe(undefined, () => {}, 3).initial).toEqual([]);
    for (const e of lifecycle(call('CA2'))) s.observe(e); // seq 4..10, ring holds 7..10
    expect(parse(s.subscribe(undefined, () => {}, 6).initial).map((f) => f.seq)).toEqual([7, 8, 9, 10]);
    for (const since of [5, 99, -1]) {
      const fresh = s.subscribe(undefined, () => {}, since);
      expect(fresh.resumed, String(since)).toBe(false);
      expect(parse(fresh.initial)).toMatchObject([{ type: 'snapshot', seq: 10 }]);
    }
  });

  it('shows an account subscriber only its calls, and unsubscribes', () => {
    const s = stream();
    const mine: string[] = [];
    const sub = s.subscribe(new Set([ACCOUNT]), (f) => mine.push(f));
    s.observe({ type: 'call.created', call: call('CA1'), at: T0 });
    s.observe({ type: 'call.created', call: call('CA2', OTHER), at: T0 });
    s.flush();
    expect(parse(mine).map((f) => f.call.sid)).toEqual(['CA1']);
    expect(parse([s.snapshot(new Set([OTHER]))])[0].calls.map((c: { sid: string }) => c.sid)).toEqual([
      'CA2',
    ]);
    expect(parse(s.subscribe(new Set([OTHER]), () => {}, 0).initial).map((f) => f.seq)).toEqual([2]);
    s.publishMetrics();
    expect(parse(mine).at(-1)).toEqual({
      type: 'metrics',
      seq: 2,
      at: T0,
      metrics: { scoped: true, RegisteredUsers: 0 },
    });
    sub.unsubscribe();
    s.observe({ type: 'call.created', call: call('CA3'), at: T0 });
    s.flush();
    expect(mine).toHaveLength(2);
  });

  it('relays its deltas to other nodes, which number them in their own sequence', () => {
    const wire: string[] = [];
    const a = stream(100, 'ID-A', (m) => wire.push(m));
    const b = stream(100, 'ID-B');
    const seen: string[] = [];
    b.subscribe(undefined, (f) => seen.push(f));
    for (const e of lifecycle(call('CA1'))) a.observe(e);
    a.flush();
    expect(wire).toHaveLength(1); // one message per window
    b.observe({ type: 'call.created', call: call('CB1'), at: T0 }); // b's own call: seq 1
    for (const m of wire) b.applyRemote(m);
    // Its own messages coming back (pub/sub delivers to the sender too) and garbage are ignored.
    for (const m of wire) a.applyRemote(m);
    b.applyRemote('not json');
    b.applyRemote('{"node":"ID-C","deltas":[null,{"type":"call.created"},{"type":"registration.changed"}]}');
    b.flush();
    expect(a.lastSeq).toBe(7);
    const frames = parse(seen);
    expect(frames.map((f) => [f.type, f.seq, f.call.node])).toEqual([
      ['call.created', 1, 'ID-B'],
      ['call.created', 2, 'ID-A'],
      ['call.updated', 3, 'ID-A'],
      ['call.updated', 4, 'ID-A'],
      ['call.updated', 5, 'ID-A'],
      ['call.updated', 6, 'ID-A'],
      ['call.updated', 7, 'ID-A'],
      ['call.ended', 8, 'ID-A'],
    ]);
    expect(frames.at(-1)).toMatchObject({ status: 'completed', duration: 4, at: T0 + 5001 });
    expect(parse([b.snapshot(undefined)])[0].calls.map((c: { sid: string }) => c.sid)).toEqual(['CB1']);
  });
});
