/**
 * The call machine driven through events alone, with fake effects (no I/O): an inbound call, an
 * outbound REST call, a Dial bridge, races, and restores from a persisted snapshot.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type Actor, createActor } from 'xstate';
import { type CallMachine, createCallMachine, statusOf } from '../../../../src/actors/call/call.machine.js';
import type {
  CallEmitted,
  CallEvent,
  CallInput,
  ReferPlan,
  ReferRequest,
} from '../../../../src/actors/call/call.types.js';
import type { CallEffects } from '../../../../src/actors/call/call-effects.js';
import {
  ENDPOINT_TIMEOUT_MS,
  PlacementError,
  ReferRefusal,
} from '../../../../src/actors/call/call-effects.js';
import { restorable, storable } from '../../../../src/actors/call/call-snapshots.js';
import type { PersistedDialog, PlaceCall } from '../../../../src/sip/port.js';

interface Deferred<T> {
  promise: Promise<T>;
  resolve(v: T): void;
  reject(e: unknown): void;
}
function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Fake effects: each command is logged; each wait is a deferred the test settles. */
function fakeEffects() {
  const log: string[] = [];
  const waits = {
    admit: [] as Array<Deferred<void> & { signal: AbortSignal }>,
    place: [] as Array<Deferred<PlaceCall> & { signal: AbortSignal }>,
    /** Endpoints asked for (their outcome is an event the test sends). */
    endpoint: [] as Array<{ sid: string; remoteSdp: string | null }>,
    refer: [] as Array<Deferred<ReferPlan> & { signal: AbortSignal }>,
  };
  const apps: Array<{ sid: string; kind: string; send: (e: CallEvent) => void }> = [];
  const effects: CallEffects = {
    ring: (sid) => log.push(`ring ${sid}`),
    answer: (sid, sdp) => log.push(`answer ${sid} ${sdp}`),
    reject: (sid, status) => log.push(`reject ${sid} ${status}`),
    cancel: (sid) => log.push(`cancel ${sid}`),
    hangUp: (sid) => log.push(`hangUp ${sid}`),
    invite: (sid, r) => log.push(`invite ${sid} ${r.requestUri}`),
    endDialog: (d) => log.push(`endDialog ${d.callId}`),
    applyRemoteSdp: (sid) => log.push(`applyRemoteSdp ${sid}`),
    setMuted: (sid, muted) => log.push(`setMuted ${sid} ${muted}`),
    unbridge: (a, b) => log.push(`unbridge ${a} ${b}`),
    releaseMedia: (sid) => log.push(`releaseMedia ${sid}`),
    startApp: (call, app, send) => {
      log.push(`startApp ${call.origin.sid} ${app.kind === 'markup' ? app.url : app.login}`);
      apps.push({ sid: call.origin.sid, kind: app.kind, send });
    },
    redirectApp: (sid, to) => {
      log.push(`redirectApp ${sid} ${to.url}`);
      return true;
    },
    endApp: (sid) => log.push(`endApp ${sid}`),
    releaseAdmission: (_a, sid) => log.push(`releaseAdmission ${sid}`),
    notifyNoMedia: (call) => log.push(`notifyNoMedia ${call.origin.sid}`),
    admit: (_a, _sid, signal) => {
      const d = Object.assign(deferred<void>(), { signal });
      waits.admit.push(d);
      return d.promise;
    },
    place: (_call, signal) => {
      const d = Object.assign(deferred<PlaceCall>(), { signal });
      waits.place.push(d);
      return d.promise;
    },
    createEndpoint: (sid, remoteSdp) => {
      waits.endpoint.push({ sid, remoteSdp });
    },
    sendDigits: async () => {
      log.push('sendDigits');
    },
    answerRefer: (sid, id, status) => log.push(`answerRefer ${sid} ${id} ${status}`),
    notifyRefer: (sid, id, status, terminated) =>
      log.push(`notifyRefer ${sid} ${id} ${status}${terminated ? ' terminated' : ''}`),
    transfer: (transferee, t, app) =>
      log.push(`transfer ${transferee} ${t.referTarget} ${t.transferor} ${t.transferee} ${t.by} ${app.url}`),
    refer: (sid, referTo) => log.push(`refer ${sid} ${referTo}`),
    planRefer: (_call, _refer, signal) => {
      const d = Object.assign(deferred<ReferPlan>(), { signal });
      waits.refer.push(d);
      return d.promise;
    },
  };
  return { effects, log, waits, apps };
}

const flush = () => new Promise((r) => setImmediate(r));
const DIALOG: PersistedDialog = {
  callId: 'c1@test',
  localUri: 'sip:a@test',
  localTag: 'l',
  remoteUri: 'sip:b@test',
  remoteTag: 'r',
  remoteTarget: 'sip:b@127.0.0.1',
  localSeq: 1,
  routeSet: [],
} as unknown as PersistedDialog;
const PLACED: PlaceCall = {
  requestUri: 'sip:bob@127.0.0.3',
  from: { uri: 'sip:a@h' },
  to: { uri: 'sip:bob@127.0.0.3' },
  sdp: 'v=0 ours',
};

function base(over: Partial<CallInput>): CallInput {
  return {
    sid: 'CA1',
    accountSid: 'AC1',
    direction: 'outbound-api',
    from: '+15550001111',
    to: '+15550002222',
    apiVersion: '2012-04-24',
    createdAt: Date.now(),
    ...over,
  };
}

let fx: ReturnType<typeof fakeEffects>;
let machine: CallMachine;
let emitted: CallEmitted[];
const start = (input: CallInput) => {
  const actor = createActor(machine, { input });
  actor.on('*', (e) => emitted.push(e as CallEmitted));
  actor.start();
  return actor;
};
const types = () => emitted.map((e) => e.type);

beforeEach(() => {
  fx = fakeEffects();
  machine = createCallMachine(fx.effects);
  emitted = [];
});
afterEach(() => vi.useRealTimers());

describe('an inbound call', () => {
  const input = base({
    direction: 'inbound',
    remoteSdp: 'v=0 theirs',
    numberCallback: { url: 'http://hooks/n', method: 'POST' },
    app: {
      kind: 'markup',
      url: 'http://hooks/voice',
      method: 'POST',
      fallbackUrl: null,
      fallbackMethod: 'POST',
      answered: false,
    },
  });

  it('rings, runs its markup, answers with the endpoint, confirms on ACK, ends on BYE — once', async () => {
    const actor = start(input);
    expect(statusOf(actor.getSnapshot())).toBe('ringing');
    expect(fx.log).toEqual(['ring CA1', 'startApp CA1 http://hooks/voice']);
    actor.send({ type: 'app.answer', at: Date.now() });
    expect(fx.waits.endpoint[0]?.remoteSdp).toBe('v=0 theirs');
    expect(statusOf(actor.getSnapshot())).toBe('ringing');
    actor.send({ type: 'media.endpointReady', sdp: 'v=0 ours', at: Date.now() });
    expect(statusOf(actor.getSnapshot())).toBe('in-progress');
    expect(fx.log).toContain('answer CA1 v=0 ours');
    expect(actor.getSnapshot().context.media.remoteSdp).toBeNull();
    actor.send({ type: 'sip.dialog', dialog: DIALOG });
    expect(actor.getSnapshot().context).toMatchObject({ sip: { confirmed: true, dialog: DIALOG } });
    actor.send({ type: 'http.mute', muted: true, at: Date.now() });
    expect(fx.log).toContain('setMuted CA1 true');
    const answeredAt = actor.getSnapshot().context.answeredAt!;
    actor.send({ type: 'sip.bye', at: answeredAt + 4_000 });
    actor.send({ type: 'http.complete', at: answeredAt + 5_000 });
    expect(statusOf(actor.getSnapshot())).toBe('completed');
    expect(types()).toEqual([
      'call.created',
      'call.ringing',
      'call.answered',
      'call.confirmed',
      'call.muted',
      'call.ended',
    ]);
    expect(emitted.at(-1)).toMatchObject({
      status: 'completed',
      cause: 'remote-hangup',
      duration: 4,
      sipStatus: 200,
    });
    expect(fx.log.slice(-2)).toEqual(['releaseMedia CA1', 'endApp CA1']);
    expect(fx.log).not.toContain('hangUp CA1');
  });

  it('the caller canceling while the endpoint is made: canceled, the late endpoint answers nothing', async () => {
    const actor = start(input);
    actor.send({ type: 'app.answer', at: Date.now() });
    actor.send({ type: 'sip.cancel', at: Date.now() });
    expect(fx.waits.endpoint).toHaveLength(1);
    actor.send({ type: 'media.endpointReady', sdp: 'late', at: Date.now() });
    await flush();
    expect(statusOf(actor.getSnapshot())).toBe('canceled');
    expect(fx.log.some((l) => l.startsWith('answer'))).toBe(false);
    expect(emitted.at(-1)).toMatchObject({ type: 'call.ended', status: 'canceled', sipStatus: 487 });
  });

  it('Reject busy → 486 and busy; a markup that ends before answering → 603 and canceled', () => {
    const a = start(input);
    a.send({ type: 'app.reject', reason: 'busy', at: Date.now() });
    expect(statusOf(a.getSnapshot())).toBe('busy');
    const b = start({ ...input, sid: 'CA2' });
    b.send({ type: 'app.done', at: Date.now() });
    expect(statusOf(b.getSnapshot())).toBe('canceled');
    expect(fx.log).toContain('reject CA1 486');
    expect(fx.log).toContain('reject CA2 603');
  });

  it('no RTP port: 503 to the caller, a Notification, and the call fails', () => {
    const actor = start(input);
    actor.send({ type: 'app.answer', at: Date.now() });
    expect(fx.waits.endpoint).toEqual([{ sid: 'CA1', remoteSdp: 'v=0 theirs' }]);
    actor.send({ type: 'media.endpointFailed', reason: 'no-port', at: Date.now() });
    expect(statusOf(actor.getSnapshot())).toBe('failed');
    expect(fx.log).toEqual(expect.arrayContaining(['reject CA1 503', 'notifyNoMedia CA1']));
    expect(emitted.at(-1)).toMatchObject({ sipStatus: 503 });
  });

  it('an endpoint not ready in time, or lost while it is made: 500 to the caller, the call fails', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const late = start(input);
    late.send({ type: 'app.answer', at: Date.now() });
    vi.advanceTimersByTime(ENDPOINT_TIMEOUT_MS - 1);
    expect(statusOf(late.getSnapshot())).toBe('ringing');
    vi.advanceTimersByTime(1);
    expect(statusOf(late.getSnapshot())).toBe('failed');
    const lost = start({ ...input, sid: 'CA2' });
    lost.send({ type: 'app.answer', at: Date.now() });
    lost.send({ type: 'media.lost', reason: 'engine-down', at: Date.now() });
    expect(statusOf(lost.getSnapshot())).toBe('failed');
    expect(fx.log).toEqual(expect.arrayContaining(['reject CA1 500', 'reject CA2 500']));
    expect(fx.log.some((l) => l.startsWith('notifyNoMedia') || l.startsWith('answer'))).toBe(false);
    expect(emitted.filter((e) => e.type === 'call.ended')).toMatchObject([
      { status: 'failed', cause: 'media-lost', sipStatus: 500 },
      { status: 'failed', cause: 'media-lost', sipStatus: 500 },
    ]);
  });
});

describe('an outbound REST call', () => {
  const input = base({
    timeoutSeconds: 30,
    markup: { url: 'http://hooks/a', method: 'POST', fallbackUrl: null, fallbackMethod: 'POST' },
    progress: {
      url: 'http://hooks/s',
      method: 'POST',
      events: ['initiated', 'ringing', 'answered', 'completed'],
    },
  });

  it('queued → admitted → INVITE → ringing → answered (its Url runs) → hung up by the app', async () => {
    const actor = start(input);
    expect(statusOf(actor.getSnapshot())).toBe('queued');
    fx.waits.admit[0]!.resolve();
    await flush();
    expect(actor.getSnapshot().value).toEqual({ dialing: 'placing' });
    fx.waits.place[0]!.resolve(PLACED);
    await flush();
    expect(fx.log).toContain('invite CA1 sip:bob@127.0.0.3');
    expect(actor.getSnapshot().context.media.localSdp).toBe('v=0 ours');
    actor.send({ type: 'sip.ringing', at: Date.now() });
    actor.send({ type: 'sip.answered', at: Date.now(), dialog: DIALOG, sdp: 'v=0 theirs' });
    expect(statusOf(actor.getSnapshot())).toBe('in-progress');
    expect(fx.log).toEqual(expect.arrayContaining(['applyRemoteSdp CA1', 'startApp CA1 http://hooks/a']));
    actor.send({ type: 'app.done', at: Date.now() });
    expect(statusOf(actor.getSnapshot())).toBe('completed');
    expect(fx.log).toEqual(expect.arrayContaining(['hangUp CA1', 'releaseAdmission CA1']));
    // Progress callbacks are numbered in the order they are due.
    const seq = emitted.map((e) => `${e.type}:${e.call.progressSent}`);
    expect(seq).toEqual([
      'call.created:0',
      'call.initiated:0',
      'call.ringing:1',
      'call.answered:2',
      'call.ended:3',
    ]);
  });

  it('Timeout counts from the INVITE: no answer in time → no-answer and the INVITE is canceled', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const actor = start(input);
    fx.waits.admit[0]!.resolve();
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(40_000); // placing has no ring timer
    expect(actor.getSnapshot().value).toEqual({ dialing: 'placing' });
    fx.waits.place[0]!.resolve(PLACED);
    await vi.advanceTimersByTimeAsync(0);
    actor.send({ type: 'sip.ringing', at: Date.now() });
    await vi.advanceTimersByTimeAsync(29_999);
    expect(statusOf(actor.getSnapshot())).toBe('ringing');
    await vi.advanceTimersByTimeAsync(1);
    expect(statusOf(actor.getSnapshot())).toBe('no-answer');
    expect(fx.log).toContain('cancel CA1');
  });

  it('not placed (client not registered, 480) → no-answer; refused target (403) → failed, local', async () => {
    const a = start(input);
    fx.waits.admit[0]!.resolve();
    await flush();
    fx.waits.place[0]!.reject(new PlacementError(480, 'client not registered'));
    await flush();
    expect(statusOf(a.getSnapshot())).toBe('no-answer');
    const b = start({ ...input, sid: 'CA2' });
    fx.waits.admit[1]!.resolve();
    await flush();
    fx.waits.place[1]!.reject(new PlacementError(403, 'refused'));
    await flush();
    expect(statusOf(b.getSnapshot())).toBe('failed');
    expect(b.getSnapshot().context.sip.outcome).toMatchObject({ status: 403, local: true });
  });

  it('REST cancel while queued aborts the admission wait; cancel does not touch an answered call', async () => {
    const a = start(input);
    a.send({ type: 'http.cancel', at: Date.now() });
    expect(statusOf(a.getSnapshot())).toBe('canceled');
    expect(fx.waits.admit[0]!.signal.aborted).toBe(true);
    expect(fx.log).not.toContain('releaseAdmission CA1');
    const b = start({ ...input, sid: 'CA2' });
    fx.waits.admit[1]!.resolve();
    await flush();
    fx.waits.place[0]!.resolve(PLACED);
    await flush();
    b.send({ type: 'sip.answered', at: Date.now() });
    expect(b.getSnapshot().can({ type: 'http.cancel', at: Date.now() })).toBe(false);
    b.send({ type: 'http.complete', at: Date.now() });
    expect(statusOf(b.getSnapshot())).toBe('completed');
  });
});

describe('a Dial bridge', () => {
  it('the child is placed at once, answers, runs its whisper, is bridged, moved, and ends on its own', async () => {
    const parent = start(base({ direction: 'inbound', remoteSdp: 'x', app: null }));
    const child = start(
      base({ sid: 'CA9', direction: 'outbound-dial', parentCallSid: 'CA1', timeoutSeconds: 20 }),
    );
    expect(fx.waits.admit).toHaveLength(0);
    fx.waits.place[0]!.resolve(PLACED);
    await flush();
    child.send({ type: 'sip.answered', at: Date.now(), dialog: DIALOG });
    expect(fx.log).not.toContain('startApp CA9 http://hooks/a'); // a Dial leg runs no Url of its own
    child.send({ type: 'app.whisper', url: 'http://hooks/whisper', method: 'POST' });
    expect(child.getSnapshot().context.whisper).toBe('running');
    fx.apps.find((a) => a.sid === 'CA9')!.send({ type: 'app.done', at: Date.now() });
    expect(child.getSnapshot().context.whisper).toBe('done');
    expect(statusOf(child.getSnapshot())).toBe('in-progress');
    parent.send({ type: 'app.bridged', peer: 'CA9', at: Date.now() });
    child.send({ type: 'app.bridged', peer: 'CA1', at: Date.now() });
    expect(emitted.filter((e) => e.type === 'call.bridged').map((e) => e.call.origin.sid)).toEqual([
      'CA1',
      'CA9',
    ]);
    child.send({ type: 'app.detach' });
    child.send({
      type: 'http.move',
      to: { url: 'http://hooks/moved', method: 'POST', fallbackUrl: null, fallbackMethod: 'POST' },
      unbridge: true,
    });
    expect(fx.log).toEqual(expect.arrayContaining(['unbridge CA9 CA1', 'startApp CA9 http://hooks/moved']));
    expect(child.getSnapshot().context).toMatchObject({ peer: null, detached: true });
    child.send({ type: 'sip.bye', at: Date.now() });
    expect(statusOf(child.getSnapshot())).toBe('completed');
    expect(statusOf(parent.getSnapshot())).toBe('ringing');
  });

  it('a busy child ends busy with its SIP status for the DialCallStatus', async () => {
    const child = start(base({ sid: 'CA9', direction: 'outbound-dial', parentCallSid: 'CA1' }));
    fx.waits.place[0]!.resolve(PLACED);
    await flush();
    child.send({ type: 'sip.failed', status: 486, reason: 'Busy Here', at: Date.now() });
    expect(emitted.at(-1)).toMatchObject({ type: 'call.ended', status: 'busy', sipStatus: 486 });
  });
});

describe('a REFER on a Dial bridge (blind transfer)', () => {
  const REFER: ReferRequest = {
    id: '7',
    referTo: 'sip:carol@127.0.0.4',
    target: 'carol',
    transferor: 'bob',
    transferee: 'alice',
  };
  const REFER_URL = {
    url: 'http://hooks/refer',
    method: 'POST',
    fallbackUrl: null,
    fallbackMethod: 'POST',
  } as const;
  /** A Dial child CA9 answered and bridged with its inbound parent CA1. */
  async function bridged() {
    const parent = start(
      base({
        direction: 'inbound',
        remoteSdp: 'x',
        app: { ...REFER_URL, url: 'http://hooks/voice', kind: 'markup', answered: false },
      }),
    );
    parent.send({ type: 'app.answer', at: Date.now() });
    parent.send({ type: 'media.endpointReady', sdp: 'v=0 ours', at: Date.now() });
    const child = start(base({ sid: 'CA9', direction: 'outbound-dial', parentCallSid: 'CA1' }));
    fx.waits.place[0]!.resolve(PLACED);
    await flush();
    child.send({ type: 'sip.answered', at: Date.now(), dialog: DIALOG });
    parent.send({ type: 'app.bridged', peer: 'CA9', at: Date.now() });
    child.send({ type: 'app.bridged', peer: 'CA1', at: Date.now() });
    fx.log.length = 0;
    return { parent, child };
  }

  it('accepted: 202, NOTIFY 100, the peer runs the ReferUrl; the outcome NOTIFY ends the transferor', async () => {
    const { parent, child } = await bridged();
    child.send({ type: 'sip.refer', refer: REFER, at: Date.now() });
    expect(child.getSnapshot().matches({ inProgress: 'referring' })).toBe(true);
    // A second REFER while the first is handled is refused, not queued.
    child.send({ type: 'sip.refer', refer: { ...REFER, id: '8' }, at: Date.now() });
    expect(fx.log).toContain('answerRefer CA9 8 491');
    fx.waits.refer[0]!.resolve({ transferee: 'CA1', app: REFER_URL });
    await flush();
    expect(fx.log).toEqual([
      'answerRefer CA9 8 491',
      'answerRefer CA9 7 202',
      'notifyRefer CA9 7 100',
      'unbridge CA9 CA1',
      'transfer CA1 carol bob alice CA9 http://hooks/refer',
    ]);
    expect(child.getSnapshot().context).toMatchObject({ peer: null, detached: true });
    parent.send({
      type: 'app.transfer',
      transfer: { referTarget: 'carol', transferor: 'bob', transferee: 'alice', by: 'CA9' },
      app: REFER_URL,
      at: Date.now(),
    });
    expect(fx.log).toContain('startApp CA1 http://hooks/refer');
    expect(parent.getSnapshot().context).toMatchObject({
      peer: null,
      transfer: { referTarget: 'carol', by: 'CA9' },
      app: { url: 'http://hooks/refer', answered: true },
    });
    child.send({ type: 'app.referOutcome', status: 200, at: Date.now() });
    expect(fx.log.slice(-3)).toEqual(['notifyRefer CA9 7 200 terminated', 'hangUp CA9', 'releaseMedia CA9']);
    expect(statusOf(child.getSnapshot())).toBe('completed');
    expect(statusOf(parent.getSnapshot())).toBe('in-progress');
  });

  it('refused by the plan (no ReferUrl): 404 with its reason, the bridge stays', async () => {
    const { child } = await bridged();
    child.send({ type: 'sip.refer', refer: REFER, at: Date.now() });
    fx.waits.refer[0]!.reject(new ReferRefusal(404, 'no Refer URL'));
    await flush();
    expect(fx.log).toEqual(['answerRefer CA9 7 404']);
    expect(child.getSnapshot().context).toMatchObject({ peer: 'CA1', refer: null, detached: false });
    expect(child.getSnapshot().matches({ inProgress: 'idle' })).toBe(true);
  });

  it('a call not in progress answers 404 at once; no outcome within the subscription → 408 and BYE', async () => {
    const ringing = start(base({ sid: 'CA5', direction: 'outbound-dial', parentCallSid: 'CA1' }));
    ringing.send({ type: 'sip.refer', refer: REFER, at: Date.now() });
    expect(fx.log).toContain('answerRefer CA5 7 404');
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { child } = await bridged();
    child.send({ type: 'sip.refer', refer: REFER, at: Date.now() });
    fx.waits.refer[0]!.resolve({ transferee: 'CA1', app: REFER_URL });
    await vi.advanceTimersByTimeAsync(119_999);
    expect(statusOf(child.getSnapshot())).toBe('in-progress');
    await vi.advanceTimersByTimeAsync(1);
    expect(fx.log.slice(-3)).toEqual(['notifyRefer CA9 7 408 terminated', 'hangUp CA9', 'releaseMedia CA9']);
    expect(statusOf(child.getSnapshot())).toBe('completed');
  });
});

describe('restore from a persisted snapshot (another node)', () => {
  const restore = (persisted: unknown) => {
    const snapshot = JSON.parse(JSON.stringify(storable(persisted)));
    const actor = createActor(machine, { snapshot, input: snapshot.context });
    actor.on('*', (e) => emitted.push(e as CallEmitted));
    actor.start();
    actor.send({ type: 'call.restored', at: Date.now() });
    return actor;
  };

  it('a queued REST call is admitted again and dialled', async () => {
    const a = start(
      base({ markup: { url: 'http://hooks/a', method: 'POST', fallbackUrl: null, fallbackMethod: 'POST' } }),
    );
    const persisted = a.getPersistedSnapshot();
    a.stop();
    emitted = [];
    const b = restore(persisted);
    expect(fx.waits.admit).toHaveLength(2);
    fx.waits.admit[1]!.resolve();
    await flush();
    fx.waits.place[0]!.resolve(PLACED);
    await flush();
    expect(b.getSnapshot().value).toEqual({ dialing: 'sent' });
    expect(b.getSnapshot().context.origin.markup?.url).toBe('http://hooks/a');
  });

  it('an answered call ends completed with a BYE in its dialog; credentials are never stored', async () => {
    const a = start(base({ direction: 'outbound-dial', credentials: { username: 'u', password: 'secret' } }));
    fx.waits.place[0]!.resolve(PLACED);
    await flush();
    a.send({ type: 'sip.answered', at: Date.now() - 3_000, dialog: DIALOG });
    const persisted = a.getPersistedSnapshot();
    expect(JSON.stringify(storable(persisted))).not.toContain('secret');
    emitted = [];
    const b = restore(persisted);
    expect(statusOf(b.getSnapshot())).toBe('completed');
    expect(fx.log).toContain('endDialog c1@test');
    expect(emitted).toHaveLength(1);
    expect(emitted[0]).toMatchObject({
      type: 'call.ended',
      cause: 'node-lost',
      status: 'completed',
      duration: 3,
    });
  });

  it('a snapshot stored by the previous version (a flat context) restores the same way', async () => {
    const a = start(base({ direction: 'outbound-dial', callerName: 'Alice' }));
    fx.waits.place[0]!.resolve(PLACED);
    await flush();
    a.send({ type: 'sip.answered', at: Date.now() - 3_000, dialog: DIALOG });
    const stored = JSON.parse(JSON.stringify(storable(a.getPersistedSnapshot())));
    const { origin, sip, media, ...rest } = stored.context;
    const flat = {
      ...stored,
      context: {
        ...rest,
        ...origin,
        sipOutcome: sip.outcome,
        dialog: sip.dialog,
        confirmed: sip.confirmed,
        finalResponse: sip.finalResponse,
        ...media,
      },
    };
    expect(restorable(flat)).toEqual(stored);
    expect(restorable(stored)).toBe(stored);
    emitted = [];
    const b = restore(restorable(flat));
    expect(statusOf(b.getSnapshot())).toBe('completed');
    expect(fx.log).toContain('endDialog c1@test');
    expect(emitted[0]).toMatchObject({ type: 'call.ended', cause: 'node-lost', duration: 3 });
  });

  it('a call ringing on the dead node fails (its INVITE transaction died with it)', async () => {
    const a = start(base({ direction: 'inbound', remoteSdp: 'x' }));
    const b = restore(a.getPersistedSnapshot());
    expect(statusOf(b.getSnapshot())).toBe('failed');
  });
});

describe('races', () => {
  it('BYE, REST hangup and app hangup at the same moment end the call once', async () => {
    const a = start(base({ direction: 'outbound-dial' }));
    fx.waits.place[0]!.resolve(PLACED);
    await flush();
    a.send({ type: 'sip.answered', at: Date.now() });
    const actor: Actor<CallMachine> = a;
    actor.send({ type: 'sip.bye', at: Date.now() });
    actor.send({ type: 'http.complete', at: Date.now() });
    actor.send({ type: 'app.hangup', at: Date.now() });
    expect(emitted.filter((e) => e.type === 'call.ended')).toHaveLength(1);
    expect(fx.log.filter((l) => l.startsWith('hangUp'))).toHaveLength(0);
  });
});
