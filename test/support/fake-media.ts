/**
 * A fake MediaPort for unit tests (behind our own port, src/media/port.ts). It keeps the port's
 * guarantees: commands never throw, every started play/collect/record ends with exactly one
 * `*Done`/`*Failed` event (asynchronously, as over IPC), and `stop`/`release` end running operations
 * with reason `stopped`/`released`. Tests script outcomes and drive the rest by hand.
 */
import type {
  CollectOptions,
  ConferenceJoinOptions,
  EndpointStats,
  EngineLoad,
  MediaEvent,
  MediaPort,
  PlayOptions,
  PlaySource,
  RecordOptions,
} from '../../src/media/port.js';

/** A command as the fake received it. */
export type MediaCommand =
  | { op: 'play'; endpointId: string; opId: string; source: PlaySource; opts: PlayOptions }
  | { op: 'collect'; endpointId: string; opId: string; opts: CollectOptions }
  | { op: 'record'; endpointId: string; opId: string; opts: RecordOptions }
  | { op: 'stop'; endpointId: string }
  | { op: 'conferenceJoin'; endpointId: string; opts: ConferenceJoinOptions }
  | { op: 'conferenceLeave'; endpointId: string }
  | { op: 'release'; endpointId: string }
  | { op: 'other'; name: string; endpointId: string };

/** How a play ends on its own: completed, failed with a reason, or held until driven. */
export type PlayScript = 'complete' | 'hold' | { fail: string };

interface ActiveOp {
  readonly kind: 'play' | 'collect' | 'record';
  readonly endpointId: string;
  readonly opId: string;
  readonly interruptOnDtmf: boolean;
  readonly recordingSid?: string;
}

export class FakeMediaPort implements MediaPort {
  readonly commands: MediaCommand[] = [];
  /** Decides how each play ends; default: completes. */
  playScript: (source: PlaySource) => PlayScript = () => 'complete';
  /** Results of the next collects, in order; when empty a collect is held until stopped. */
  readonly collectResults: Array<{ digits: string; reason: 'finish-key' | 'num-digits' | 'timeout' }> = [];
  /** Results of the next records, in order; when empty a record is held until stopped. */
  readonly recordResults: Array<
    | { durationSeconds: number; digits: string; reason: 'finish-key' | 'silence' | 'max-length' }
    | { fail: string }
  > = [];
  /** Seconds a record has captured when it is stopped or released (what was said before a hangup). */
  recordedSecondsOnStop = 0;
  private readonly listeners = new Set<(e: MediaEvent) => void>();
  private readonly active: ActiveOp[] = [];
  private readonly rooms = new Map<string, string>();

  /** Commands of one kind. */
  ops<K extends MediaCommand['op']>(op: K): Extract<MediaCommand, { op: K }>[] {
    return this.commands.filter((c): c is Extract<MediaCommand, { op: K }> => c.op === op);
  }

  /** Operations still running. */
  running(): readonly ActiveOp[] {
    return [...this.active];
  }

  subscribe(listener: (event: MediaEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  createEndpoint(endpointId: string): void {
    this.commands.push({ op: 'other', name: 'createEndpoint', endpointId });
  }
  applyRemoteSdp(endpointId: string): void {
    this.commands.push({ op: 'other', name: 'applyRemoteSdp', endpointId });
  }

  play(endpointId: string, opId: string, source: PlaySource, opts: PlayOptions = {}): void {
    this.commands.push({ op: 'play', endpointId, opId, source, opts });
    const script = this.playScript(source);
    if (typeof script === 'object') {
      this.later({ type: 'media.playFailed', endpointId, opId, reason: script.fail, message: script.fail });
      return;
    }
    this.active.push({ kind: 'play', endpointId, opId, interruptOnDtmf: opts.interruptOnDtmf ?? false });
    if (script === 'complete') this.finish(opId, 'completed');
  }

  collect(endpointId: string, opId: string, opts: CollectOptions): void {
    this.commands.push({ op: 'collect', endpointId, opId, opts });
    this.active.push({ kind: 'collect', endpointId, opId, interruptOnDtmf: false });
    const r = this.collectResults.shift();
    if (r)
      this.end(opId, { type: 'media.collectDone', endpointId, opId, digits: r.digits, reason: r.reason });
  }

  record(endpointId: string, opId: string, opts: RecordOptions): void {
    this.commands.push({ op: 'record', endpointId, opId, opts });
    const recordingSid = opts.recordingSid;
    this.active.push({ kind: 'record', endpointId, opId, interruptOnDtmf: false, recordingSid });
    const r = this.recordResults.shift();
    if (!r) return;
    if ('fail' in r) {
      this.end(opId, { type: 'media.recordFailed', endpointId, opId, recordingSid, message: r.fail });
      return;
    }
    this.end(opId, { type: 'media.recordDone', endpointId, opId, recordingSid, ...r });
  }

  stop(endpointId: string): void {
    this.commands.push({ op: 'stop', endpointId });
    this.endAll(endpointId, 'stopped');
  }

  bridge(a: string, b: string): void {
    this.commands.push({ op: 'other', name: 'bridge', endpointId: `${a}|${b}` });
  }
  unbridge(a: string, b: string): void {
    this.commands.push({ op: 'other', name: 'unbridge', endpointId: `${a}|${b}` });
  }

  conferenceJoin(endpointId: string, opts: ConferenceJoinOptions): void {
    this.commands.push({ op: 'conferenceJoin', endpointId, opts });
    this.rooms.set(endpointId, opts.room);
    this.later({ type: 'media.conferenceJoined', endpointId, room: opts.room, participants: 1 });
  }

  conferenceLeave(endpointId: string): void {
    this.commands.push({ op: 'conferenceLeave', endpointId });
    this.leaveRoom(endpointId);
  }

  setMuted(endpointId: string): void {
    this.commands.push({ op: 'other', name: 'setMuted', endpointId });
  }

  release(endpointId: string): void {
    this.commands.push({ op: 'release', endpointId });
    this.endAll(endpointId, 'released');
    this.leaveRoom(endpointId);
    this.later({ type: 'media.released', endpointId });
  }

  async stats(): Promise<EndpointStats | null> {
    return null;
  }
  async load(): Promise<EngineLoad> {
    return {
      endpoints: 0,
      tickLateP50Ms: 0,
      tickLateP99Ms: 0,
      tickLateMaxMs: 0,
      cpuPercent: 0,
      rssBytes: 0,
      restarts: 0,
    };
  }
  async close(): Promise<void> {}

  // --- driving the fake ---

  /** Ends a held play as completed. */
  completePlay(opId: string): void {
    this.finish(opId, 'completed');
  }

  /** A key press: interrupts interruptible plays on the endpoint and emits `media.dtmf`. */
  pressKey(endpointId: string, digit: string): void {
    this.later({ type: 'media.dtmf', endpointId, digit });
    for (const op of this.active.filter((o) => o.endpointId === endpointId && o.kind === 'play')) {
      if (op.interruptOnDtmf) this.finish(op.opId, 'interrupted');
    }
  }

  /** The room (or the conference manager) removes the endpoint. */
  kickFromConference(endpointId: string): void {
    this.leaveRoom(endpointId);
  }

  /** Simulates an engine crash for the endpoint. */
  loseEndpoint(endpointId: string): void {
    for (let i = this.active.length - 1; i >= 0; i--)
      if (this.active[i]!.endpointId === endpointId) this.active.splice(i, 1);
    this.later({ type: 'media.endpointLost', endpointId, reason: 'engine-down' });
  }

  private leaveRoom(endpointId: string): void {
    const room = this.rooms.get(endpointId);
    if (room === undefined) return;
    this.rooms.delete(endpointId);
    this.later({ type: 'media.conferenceLeft', endpointId, room, participants: 0 });
  }

  private finish(opId: string, reason: 'completed' | 'interrupted' | 'stopped' | 'released'): void {
    const op = this.active.find((o) => o.opId === opId && o.kind === 'play');
    if (!op) return;
    this.end(opId, { type: 'media.playDone', endpointId: op.endpointId, opId, reason });
  }

  private endAll(endpointId: string, reason: 'stopped' | 'released'): void {
    for (const op of this.active.filter((o) => o.endpointId === endpointId)) {
      if (op.kind === 'play') this.finish(op.opId, reason);
      else if (op.kind === 'collect')
        this.end(op.opId, { type: 'media.collectDone', endpointId, opId: op.opId, digits: '', reason });
      else
        this.end(op.opId, {
          type: 'media.recordDone',
          endpointId,
          opId: op.opId,
          recordingSid: op.recordingSid ?? '',
          durationSeconds: this.recordedSecondsOnStop,
          digits: '',
          reason,
        });
    }
  }

  /** Removes the op (exactly one terminal event) and emits its event asynchronously. */
  private end(opId: string, event: MediaEvent): void {
    const i = this.active.findIndex((o) => o.opId === opId);
    if (i < 0) return;
    this.active.splice(i, 1);
    this.later(event);
  }

  private later(event: MediaEvent): void {
    queueMicrotask(() => {
      for (const l of [...this.listeners]) l(event);
    });
  }
}
