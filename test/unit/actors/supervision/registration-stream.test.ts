/**
 * Registrations on the live stream, fed the registrar's change announcements directly: a new
 * binding is `registered`, a refresh that changes only the expiry is silent here but relayed, a
 * changed one is `registered` again, an un-REGISTER (one contact or `*`) is `unregistered`, and a
 * binding past its time is `expired` by the stream's own timer on every node that knows it; account
 * scope filters them; a subscriber that joins mid-window gets no delta twice.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type AccountFilter, LiveStream } from '../../../../src/actors/supervision/live-stream.js';
import type { Binding, RegistrationChange } from '../../../../src/store/registration-store.js';

const ACCOUNT = 'AC00000000000000000000000000000001';
const OTHER = 'AC00000000000000000000000000000002';
const CLIENT = 'CL00000000000000000000000000000001';

function binding(contact: string, expiresAt: number, over: Partial<Binding> = {}): Binding {
  return {
    aor: 'alice@example.test',
    contact,
    expiresAt,
    callId: 'c1',
    cseq: 1,
    accountSid: ACCOUNT,
    clientSid: CLIENT,
    flow: { protocol: 'UDP', address: '127.0.0.2', port: 5070, local: { address: '127.0.0.1', port: 5060 } },
    userAgent: 'baresip',
    registeredAt: Date.now(),
    ...over,
  };
}

function change(
  upserted: Binding[],
  removed: string[] | '*' = [],
  aor = 'alice@example.test',
): RegistrationChange {
  return {
    aor,
    accountSid: upserted[0]?.accountSid ?? ACCOUNT,
    clientSid: CLIENT,
    at: Date.now(),
    upserted,
    removed,
  };
}

function stream(node: string, relay?: (m: string) => void) {
  return new LiveStream({
    node,
    ...(relay ? { relay } : {}),
    metrics: (_a: AccountFilter) => ({}),
  });
}

const parse = (frames: readonly string[]) => frames.flatMap((f) => JSON.parse(f));
const states = (frames: readonly string[]) =>
  parse(frames)
    .filter((f) => f.type === 'registration.changed')
    .map((f) => [f.state, f.registration.contact]);

beforeEach(() => {
  vi.useFakeTimers({ now: Date.UTC(2026, 0, 1, 12) });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('LiveStream registrations', () => {
  it('shows added, changed, removed and expired bindings; a plain refresh only moves the timer', () => {
    const wire: string[] = [];
    const a = stream('ID-A', (m) => wire.push(m));
    const got: string[] = [];
    a.subscribe(undefined, (f) => got.push(f));
    const t = Date.now();
    a.observeRegistration(change([binding('sip:alice@127.0.0.2:5070', t + 60_000)]));
    a.observeRegistration(change([binding('sip:alice@127.0.0.2:5070', t + 120_000)])); // refresh
    a.observeRegistration(
      change([
        binding('sip:alice@127.0.0.2:5071', t + 60_000, {
          flow: { ...binding('', 0).flow, protocol: 'TCP' },
        }),
      ]),
    );
    a.observeRegistration(change([binding('sip:alice@127.0.0.2:5071', t + 60_000, { userAgent: 'other' })]));
    a.flush();
    expect(states(got)).toEqual([
      ['registered', 'sip:alice@127.0.0.2:5070'],
      ['registered', 'sip:alice@127.0.0.2:5071'],
      ['registered', 'sip:alice@127.0.0.2:5071'],
    ]);
    const snap = JSON.parse(a.snapshot(undefined));
    expect(snap.registrations).toHaveLength(2);
    expect(snap.metrics).toEqual({ RegisteredUsers: 1 });
    expect(snap.registrations[0]).toMatchObject({
      aor: 'alice@example.test',
      accountSid: ACCOUNT,
      clientSid: CLIENT,
      transport: 'UDP',
      source: '127.0.0.2:5070',
      node: 'ID-A',
      expiresAt: t + 120_000,
    });
    // The 5071 binding expires at 60 s; the refreshed 5070 one does not.
    vi.advanceTimersByTime(61_000);
    a.flush();
    expect(states(got).at(-1)).toEqual(['expired', 'sip:alice@127.0.0.2:5071']);
    a.observeRegistration(change([], ['sip:alice@127.0.0.2:5070']));
    a.flush();
    expect(states(got).at(-1)).toEqual(['unregistered', 'sip:alice@127.0.0.2:5070']);
    expect(JSON.parse(a.snapshot(undefined)).registrations).toEqual([]);
    vi.advanceTimersByTime(120_000);
    a.flush();
    expect(states(got)).toHaveLength(5);
    // The silent refresh went to the other nodes with the rest of its window.
    expect(JSON.parse(wire[0] as string).refreshes).toEqual([
      { aor: 'alice@example.test', contact: 'sip:alice@127.0.0.2:5070', expiresAt: t + 120_000 },
    ]);
  });

  it('a refreshed binding expires at its new time, later or sooner than the one before', () => {
    const a = stream('ID-A');
    const got: string[] = [];
    a.subscribe(undefined, (f) => got.push(f));
    const t = Date.now();
    const later = 'sip:alice@127.0.0.2:5070';
    const sooner = 'sip:alice@127.0.0.2:5071';
    a.observeRegistration(change([binding(later, t + 60_000), binding(sooner, t + 120_000)]));
    a.observeRegistration(change([binding(later, t + 120_000), binding(sooner, t + 30_000)]));
    a.flush();
    expect(states(got)).toEqual([
      ['registered', later],
      ['registered', sooner],
    ]);
    vi.advanceTimersByTime(31_000);
    a.flush();
    expect(states(got).at(-1)).toEqual(['expired', sooner]);
    // Past the first expiry of `later`: still registered.
    vi.advanceTimersByTime(30_000);
    a.flush();
    expect(states(got)).toHaveLength(3);
    expect(
      JSON.parse(a.snapshot(undefined)).registrations.map((r: { contact: string }) => r.contact),
    ).toEqual([later]);
    vi.advanceTimersByTime(60_000);
    a.flush();
    expect(states(got).at(-1)).toEqual(['expired', later]);
    expect(JSON.parse(a.snapshot(undefined)).registrations).toEqual([]);
  });

  it('another node follows the relay, refreshes included, and times expiry itself', () => {
    const wire: string[] = [];
    const a = stream('ID-A', (m) => wire.push(m));
    const b = stream('ID-B');
    const got: string[] = [];
    b.subscribe(undefined, (f) => got.push(f));
    const t = Date.now();
    a.observeRegistration(
      change([binding('sip:alice@h:1', t + 60_000), binding('sip:alice@h:2', t + 60_000)]),
    );
    a.flush();
    a.observeRegistration(change([binding('sip:alice@h:1', t + 180_000)])); // silent refresh
    a.flush();
    for (const m of wire) b.applyRemote(m);
    b.flush();
    expect(states(got)).toEqual([
      ['registered', 'sip:alice@h:1'],
      ['registered', 'sip:alice@h:2'],
    ]);
    vi.advanceTimersByTime(61_000);
    b.flush();
    expect(states(got).at(-1)).toEqual(['expired', 'sip:alice@h:2']);
    // A wildcard un-REGISTER on A removes what is left, on B too.
    a.observeRegistration(change([], '*'));
    a.flush();
    b.applyRemote(wire.at(-1) as string);
    b.flush();
    expect(states(got).at(-1)).toEqual(['unregistered', 'sip:alice@h:1']);
    expect(parse(got).map((f) => f.seq)).toEqual([1, 2, 3, 4]);
    vi.advanceTimersByTime(200_000);
    b.flush();
    expect(states(got)).toHaveLength(4);
  });

  it('shows an account subscriber only its tree, and a late subscriber nothing twice', () => {
    const s = stream('ID-A');
    const mine: string[] = [];
    s.subscribe(new Set([OTHER]), (f) => mine.push(f));
    const t = Date.now();
    s.observeRegistration(change([binding('sip:alice@h:1', t + 60_000)]));
    const late: string[] = [];
    const sub = s.subscribe(undefined, (f) => late.push(f));
    s.observeRegistration(
      change(
        [binding('sip:bob@h:1', t + 60_000, { aor: 'bob@example.test', accountSid: OTHER })],
        [],
        'bob@example.test',
      ),
    );
    s.flush();
    expect(states(mine)).toEqual([['registered', 'sip:bob@h:1']]);
    // The late one's snapshot has alice; the window's deltas after it, bob only.
    expect(
      JSON.parse(sub.initial[0] as string).registrations.map((r: { contact: string }) => r.contact),
    ).toEqual(['sip:alice@h:1']);
    expect(states(late)).toEqual([['registered', 'sip:bob@h:1']]);
    expect(JSON.parse(s.snapshot(new Set([OTHER]))).metrics).toEqual({ RegisteredUsers: 1 });
    s.close();
  });
});
