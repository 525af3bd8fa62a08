/**
 * `MediaEngine`: the main-process implementation of the media port. It forks the engine process
 * (engine/entry.ts, its own event loop and 20 ms clock), forwards commands over IPC, turns the
 * engine's messages into `MediaEvent`s, stores finished recordings through the recording-storage
 * port, and supervises the process: when it dies, every operation in flight gets its terminal
 * event, every endpoint it held gets `media.endpointLost`, and a new engine is started (backoff
 * doubling from `restartMinMs` to `restartMaxMs`). Commands issued while the engine restarts are
 * queued and sent when it is ready. Commands issued in one turn of the event loop travel as one IPC
 * message (see `EngineBatch`): each message costs a write and a wake-up of the other process, which
 * outweigh the work of most commands.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { setPriority } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { RecordingStorage } from '../recordings/storage.js';
import type { EngineBatch, EngineCommand, EngineLoadReport, EngineMessage, EngineSettings } from './ipc.js';
import type {
  Codec,
  CollectOptions,
  ConferenceJoinOptions,
  EndpointStats,
  EngineLoad,
  MediaEvent,
  MediaPort,
  PlayOptions,
  PlaySource,
  RecordOptions,
} from './port.js';
import type { MediaSettings, PlayUrlPolicy } from './settings.js';

/**
 * Construction options of `MediaEngine`: `media` is `config.media`; the Play URL policy defaults to
 * private addresses allowed (pass `config.webhooks.blockPrivate`, `WEBHOOK_BLOCK_PRIVATE`) and a
 * 10 s limit; link-local and metadata addresses are always refused.
 */
export interface MediaEngineOptions extends Partial<PlayUrlPolicy> {
  readonly media: MediaSettings;
  readonly storage: RecordingStorage;
  readonly logger: Logger;
  /** Engine log level (default: the logger's level). */
  readonly engineLogLevel?: string;
  /** Spool directory for running recordings (default `<cacheDir>/spool`). */
  readonly spoolDir?: string;
  readonly restartMinMs?: number;
  readonly restartMaxMs?: number;
  /**
   * OS scheduling priority (nice value, −20…19) for the engine process; negative values need
   * CAP_SYS_NICE. Media servers usually run above signalling (FreeSWITCH `-hp`): on a busy host
   * this keeps the 20 ms clock punctual. Default: inherited (0).
   */
  readonly priority?: number;
  /** Extra Node flags for the engine process (e.g. `--cpu-prof` when profiling). */
  readonly engineExecArgv?: readonly string[];
  /** Replies to `stats`/`load` that take longer resolve as unknown. */
  readonly queryTimeoutMs?: number;
}

type PendingKind = 'play' | 'collect' | 'record';
interface PendingOp {
  readonly kind: PendingKind;
  readonly endpointId: string;
  readonly recordingSid?: string;
  /** The engine finished the recording; the main process is storing it. */
  storing?: boolean;
}

/** The endpoint an engine message concerns, read defensively (the message may be malformed). */
function endpointOfMessage(raw: unknown): string | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const m = raw as {
    endpointId?: unknown;
    event?: { endpointId?: unknown; endpoint?: { endpointId?: unknown } };
  };
  const id = m.endpointId ?? m.event?.endpointId ?? m.event?.endpoint?.endpointId;
  return typeof id === 'string' ? id : null;
}

/** The engine's entry beside this module: `.js` in the build (`npm run build`), `.ts` under tsx. */
const COMPILED = import.meta.url.endsWith('.js');
const ENTRY = new URL(COMPILED ? './engine/entry.js' : './engine/entry.ts', import.meta.url);

/** The media port over a supervised engine process (see the file header). */
export class MediaEngine implements MediaPort {
  private child: ChildProcess | null = null;
  private ready = false;
  private closing = false;
  private closed = false;
  private queue: EngineCommand[] = [];
  /** Commands for the running engine, sent together at the end of this turn of the event loop. */
  private outbox: EngineCommand[] = [];
  private flushing: NodeJS.Immediate | null = null;
  private readonly listeners = new Set<(e: MediaEvent) => void>();
  /** Endpoints the engine holds (or is creating), for `media.endpointLost` on a crash. */
  private readonly endpoints = new Map<string, 'creating' | 'ready'>();
  private readonly ops = new Map<string, PendingOp>();
  private readonly queries = new Map<number, (msg: EngineMessage) => void>();
  private readonly storing = new Set<Promise<void>>();
  /** Endpoints given up after a message about them could not be handled: later engine events are dropped. */
  private readonly abandoned = new Set<string>();
  private reqId = 0;
  private restarts = 0;
  private backoffMs: number;
  private restartTimer: NodeJS.Timeout | null = null;
  private readyWaiters: (() => void)[] = [];
  private exited: Promise<void> = Promise.resolve();

  constructor(private readonly o: MediaEngineOptions) {
    this.backoffMs = o.restartMinMs ?? 100;
  }

  /** The engine's process id (for tests and ops), or null while it is down. */
  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  /** Whether the engine process is up and answering (readiness). */
  get isReady(): boolean {
    return this.ready && !this.closing;
  }

  /** Endpoints held or being created (metrics). */
  get endpointCount(): number {
    return this.endpoints.size;
  }

  /** How many times the engine was restarted after dying. */
  get restartCount(): number {
    return this.restarts;
  }

  /** Starts the engine process; resolves once it is ready. */
  async start(): Promise<void> {
    if (!this.child && !this.closing) this.spawn();
    await this.whenReady();
  }

  /** Resolves when the engine is ready (immediately if it is). */
  whenReady(): Promise<void> {
    if (this.ready || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  private spawn(): void {
    const settings: EngineSettings = {
      ...this.o.media,
      spoolDir: this.o.spoolDir ?? join(this.o.media.cacheDir, 'spool'),
      blockPrivateUrls: this.o.blockPrivateUrls ?? false,
      urlTimeoutMs: this.o.urlTimeoutMs,
      logLevel: this.o.engineLogLevel ?? this.o.logger.level,
    };
    const child = fork(ENTRY, [], {
      execArgv: [...(COMPILED ? [] : ['--import', 'tsx']), ...(this.o.engineExecArgv ?? [])],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.child = child;
    this.ready = false;
    let resolveExit!: () => void;
    this.exited = new Promise((r) => {
      resolveExit = r;
    });
    child.on('message', (m) => {
      if (!Array.isArray(m)) this.onMessageGuarded(m);
      else for (const one of m) this.onMessageGuarded(one);
    });
    child.on('error', (err) => this.o.logger.error({ err }, 'media engine process error'));
    child.on('exit', (code, signal) => {
      resolveExit();
      if (this.child === child) this.onExit(code, signal);
    });
    if (this.o.priority !== undefined && child.pid !== undefined) {
      try {
        setPriority(child.pid, this.o.priority);
      } catch (err) {
        this.o.logger.warn({ err, priority: this.o.priority }, 'cannot set the media engine priority');
      }
    }
    child.send({ op: 'init', settings } satisfies EngineCommand);
  }

  private onExit(code: number | null, signal: string | null): void {
    this.child = null;
    this.ready = false;
    for (const q of this.queries.values()) q({ kind: 'closed' });
    this.queries.clear();
    if (this.closing) return;
    this.o.logger.error({ code, signal, endpoints: this.endpoints.size }, 'media engine died; restarting');
    this.failInFlight('engine crashed');
    this.restarts++;
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, this.o.restartMaxMs ?? 5000);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (!this.closing) this.spawn();
    }, delay);
  }

  /**
   * Ends the operations in flight that `which` selects with their terminal event (a recording being
   * stored finishes on its own and is left alone).
   */
  private endOperations(which: (op: PendingOp) => boolean, reason: string): void {
    for (const [opId, op] of this.ops) {
      if (op.storing || !which(op)) continue;
      this.ops.delete(opId);
      const endpointId = op.endpointId;
      if (op.kind === 'play') {
        this.dispatch({ type: 'media.playFailed', endpointId, opId, reason: 'engine-down', message: reason });
      } else if (op.kind === 'collect') {
        this.dispatch({ type: 'media.collectDone', endpointId, opId, digits: '', reason: 'lost' });
      } else {
        this.dispatch({
          type: 'media.recordFailed',
          endpointId,
          opId,
          recordingSid: op.recordingSid ?? '',
          message: reason,
        });
      }
    }
  }

  /** Every operation in flight ends, then every endpoint is reported lost. */
  private failInFlight(reason: string): void {
    // Commands queued for the engine that just died are answered here, so that none of them
    // reaches the next engine and produces a second terminal event.
    this.flush();
    const queued = this.queue;
    this.queue = [];
    for (const cmd of queued) this.refuse(cmd, reason);
    this.endOperations(() => true, reason);
    const lost = [...this.endpoints.keys()];
    this.endpoints.clear();
    for (const endpointId of lost) this.dispatch({ type: 'media.endpointLost', endpointId, reason });
  }

  /**
   * One engine message, guarded: a throw while handling it (a malformed message, a bug) ends that
   * message only. The endpoint it concerns gets its terminal events (its operations end, then
   * `media.endpointLost`) and is released in the engine; the process and every other endpoint go on.
   */
  private onMessageGuarded(raw: unknown): void {
    try {
      if (typeof raw !== 'object' || raw === null || typeof (raw as { kind?: unknown }).kind !== 'string') {
        throw new Error('malformed engine message');
      }
      this.onMessage(raw as EngineMessage);
    } catch (err) {
      const endpointId = endpointOfMessage(raw);
      this.o.logger.error({ err, endpointId }, 'media engine message not handled');
      if (endpointId !== null) this.abandonEndpoint(endpointId, 'engine message not handled');
    }
  }

  /** Terminal events for one endpoint and its operations; the engine is told to release it. */
  private abandonEndpoint(endpointId: string, reason: string): void {
    if (this.abandoned.has(endpointId)) return;
    this.endOperations((op) => op.endpointId === endpointId, reason);
    const state = this.endpoints.get(endpointId);
    this.endpoints.delete(endpointId);
    if (state === undefined) return;
    this.abandoned.add(endpointId);
    if (state === 'creating') {
      this.dispatch({ type: 'media.endpointFailed', endpointId, reason: 'engine-down', message: reason });
    } else {
      this.dispatch({ type: 'media.endpointLost', endpointId, reason });
    }
    // After whatever is still on its way for it, so the release is the engine's last word on it.
    if (this.ready && this.child?.connected) this.post({ op: 'release', endpointId });
  }

  private onMessage(msg: EngineMessage): void {
    switch (msg.kind) {
      case 'ready': {
        this.ready = true;
        this.backoffMs = this.o.restartMinMs ?? 100;
        const queued = this.queue;
        this.queue = [];
        for (const cmd of queued) this.post(cmd);
        const waiters = this.readyWaiters;
        this.readyWaiters = [];
        for (const w of waiters) w();
        return;
      }
      case 'closed':
        return;
      case 'event':
        this.onEvent(msg.event);
        return;
      case 'recorded':
        this.onRecorded(msg);
        return;
      case 'stats':
      case 'load': {
        const q = this.queries.get(msg.reqId);
        this.queries.delete(msg.reqId);
        q?.(msg);
        return;
      }
    }
  }

  private onEvent(e: MediaEvent): void {
    const id = e.type === 'media.endpointReady' ? e.endpoint.endpointId : e.endpointId;
    if (this.abandoned.has(id)) {
      // Already reported lost: the engine's own later events for it would be a second ending.
      if (e.type === 'media.released') this.abandoned.delete(id);
      return;
    }
    switch (e.type) {
      case 'media.endpointReady':
        this.endpoints.set(e.endpoint.endpointId, 'ready');
        break;
      case 'media.endpointFailed':
        // A failed create leaves nothing behind; a failed re-negotiation keeps the endpoint.
        if (this.endpoints.get(e.endpointId) === 'creating') this.endpoints.delete(e.endpointId);
        break;
      case 'media.released':
        this.endpoints.delete(e.endpointId);
        break;
      case 'media.playDone':
      case 'media.playFailed':
      case 'media.collectDone':
      case 'media.recordFailed':
        this.ops.delete(e.opId);
        break;
      default:
        break;
    }
    this.dispatch(e);
  }

  private onRecorded(msg: Extract<EngineMessage, { kind: 'recorded' }>): void {
    const op = this.ops.get(msg.opId);
    if (op) op.storing = true;
    const p = (async () => {
      try {
        const wav = await readFile(msg.path);
        await this.o.storage.put(msg.recordingSid, wav);
        this.ops.delete(msg.opId);
        this.dispatch({
          type: 'media.recordDone',
          endpointId: msg.endpointId,
          opId: msg.opId,
          recordingSid: msg.recordingSid,
          durationSeconds: msg.durationSeconds,
          digits: msg.digits,
          reason: msg.reason,
        });
      } catch (err) {
        this.ops.delete(msg.opId);
        this.o.logger.error({ err, recordingSid: msg.recordingSid }, 'recording could not be stored');
        this.dispatch({
          type: 'media.recordFailed',
          endpointId: msg.endpointId,
          opId: msg.opId,
          recordingSid: msg.recordingSid,
          message: `recording could not be stored: ${(err as Error).message}`,
        });
      } finally {
        await rm(msg.path, { force: true }).catch((err: unknown) =>
          this.o.logger.warn({ err, path: msg.path }, 'recording spool file not removed'),
        );
      }
    })();
    this.storing.add(p);
    void p.finally(() => this.storing.delete(p));
  }

  private dispatch(e: MediaEvent): void {
    for (const l of this.listeners) {
      try {
        l(e);
      } catch (err) {
        this.o.logger.error({ err, event: e.type }, 'media event listener threw');
      }
    }
  }

  /** Sends now when ready, else queues for the (re)started engine; after close, answers locally. */
  private command(cmd: EngineCommand): void {
    if (this.closed || this.closing) {
      this.refuse(cmd);
      return;
    }
    if (this.ready && this.child?.connected) this.post(cmd);
    else this.queue.push(cmd);
  }

  /** Adds a command to this turn's batch for the running engine. */
  private post(cmd: EngineCommand): void {
    this.outbox.push(cmd);
    this.flushing ??= setImmediate(() => this.flush());
  }

  /**
   * Sends this turn's batch. An engine that went away meanwhile never gets it: the commands are
   * queued as if issued after it left (answered locally if it died, sent to the next one if not).
   */
  private flush(): void {
    if (this.flushing) clearImmediate(this.flushing);
    this.flushing = null;
    const batch = this.outbox;
    if (!batch.length) return;
    this.outbox = [];
    if (this.ready && this.child?.connected) {
      this.child.send(batch.length === 1 ? batch[0]! : (batch satisfies EngineBatch));
    } else this.queue.push(...batch);
  }

  /** Terminal events for commands issued after close (the contract: commands never throw). */
  private refuse(cmd: EngineCommand, message = 'media engine closed'): void {
    switch (cmd.op) {
      case 'create':
      case 'applySdp':
        if (cmd.op === 'create') this.endpoints.delete(cmd.endpointId);
        this.dispatch({
          type: 'media.endpointFailed',
          endpointId: cmd.endpointId,
          reason: 'engine-down',
          message,
        });
        return;
      case 'play':
        this.ops.delete(cmd.opId);
        this.dispatch({
          type: 'media.playFailed',
          endpointId: cmd.endpointId,
          opId: cmd.opId,
          reason: 'engine-down',
          message,
        });
        return;
      case 'collect':
        this.ops.delete(cmd.opId);
        this.dispatch({
          type: 'media.collectDone',
          endpointId: cmd.endpointId,
          opId: cmd.opId,
          digits: '',
          reason: 'lost',
        });
        return;
      case 'record':
        this.ops.delete(cmd.opId);
        this.dispatch({
          type: 'media.recordFailed',
          endpointId: cmd.endpointId,
          opId: cmd.opId,
          recordingSid: cmd.opts.recordingSid,
          message,
        });
        return;
      case 'release':
        this.endpoints.delete(cmd.endpointId);
        this.dispatch({ type: 'media.released', endpointId: cmd.endpointId });
        return;
      default:
        return;
    }
  }

  // ---------------------------------------------------------------- MediaPort

  createEndpoint(
    endpointId: string,
    opts?: { readonly remoteSdp?: string; readonly codecs?: readonly Codec[]; readonly webrtc?: boolean },
  ) {
    if (!this.closing && !this.endpoints.has(endpointId)) this.endpoints.set(endpointId, 'creating');
    this.command({
      op: 'create',
      endpointId,
      remoteSdp: opts?.remoteSdp,
      codecs: opts?.codecs,
      webrtc: opts?.webrtc,
    });
  }

  applyRemoteSdp(endpointId: string, sdp: string): void {
    this.command({ op: 'applySdp', endpointId, sdp });
  }

  play(endpointId: string, opId: string, source: PlaySource, opts: PlayOptions = {}): void {
    this.ops.set(opId, { kind: 'play', endpointId });
    this.command({ op: 'play', endpointId, opId, source, opts });
  }

  collect(endpointId: string, opId: string, opts: CollectOptions): void {
    this.ops.set(opId, { kind: 'collect', endpointId });
    this.command({ op: 'collect', endpointId, opId, opts });
  }

  record(endpointId: string, opId: string, opts: RecordOptions): void {
    this.ops.set(opId, { kind: 'record', endpointId, recordingSid: opts.recordingSid });
    this.command({ op: 'record', endpointId, opId, opts });
  }

  stop(endpointId: string): void {
    this.command({ op: 'stop', endpointId });
  }

  bridge(a: string, b: string): void {
    this.command({ op: 'bridge', a, b });
  }

  unbridge(a: string, b: string): void {
    this.command({ op: 'unbridge', a, b });
  }

  conferenceJoin(endpointId: string, opts: ConferenceJoinOptions): void {
    this.command({ op: 'confJoin', endpointId, opts });
  }

  conferenceLeave(endpointId: string): void {
    this.command({ op: 'confLeave', endpointId });
  }

  setMuted(endpointId: string, muted: boolean): void {
    this.command({ op: 'mute', endpointId, muted });
  }

  release(endpointId: string): void {
    this.command({ op: 'release', endpointId });
  }

  subscribe(listener: (event: MediaEvent) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  private query<T extends EngineMessage>(build: (reqId: number) => EngineCommand): Promise<T | null> {
    if (!this.ready || !this.child?.connected) return Promise.resolve(null);
    const reqId = ++this.reqId;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.queries.delete(reqId);
        resolve(null);
      }, this.o.queryTimeoutMs ?? 2000);
      this.queries.set(reqId, (msg) => {
        clearTimeout(timer);
        resolve(msg.kind === 'closed' ? null : (msg as T));
      });
      this.child!.send(build(reqId));
    });
  }

  async stats(endpointId: string): Promise<EndpointStats | null> {
    const r = await this.query<Extract<EngineMessage, { kind: 'stats' }>>((reqId) => ({
      op: 'stats',
      reqId,
      endpointId,
    }));
    return r?.stats ?? null;
  }

  /**
   * Engine load since the previous `load()` call (tick lateness percentiles and CPU over that
   * window; at most the last 60 s of ticks). Zeros while the engine is down.
   */
  async load(): Promise<EngineLoad & Omit<EngineLoadReport, keyof EngineLoad>> {
    const r = await this.query<Extract<EngineMessage, { kind: 'load' }>>((reqId) => ({ op: 'load', reqId }));
    const l: EngineLoadReport = r?.load ?? {
      endpoints: 0,
      tickLateP50Ms: 0,
      tickLateP99Ms: 0,
      tickLateMaxMs: 0,
      tickWorkP50Ms: 0,
      tickWorkP99Ms: 0,
      tickWorkMaxMs: 0,
      cpuPercent: 0,
      rssBytes: 0,
      ticks: 0,
      skippedTicks: 0,
    };
    return { ...l, restarts: this.restarts };
  }

  /** Releases every endpoint (their terminal events are delivered), stores recordings, stops the process. */
  async close(): Promise<void> {
    if (this.closing) {
      await this.exited;
      await Promise.allSettled([...this.storing]);
      return;
    }
    this.closing = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    // This turn's commands reach the engine before its shutdown.
    this.flush();
    for (const cmd of this.queue) this.refuse(cmd);
    this.queue = [];
    const child = this.child;
    if (child?.connected && this.ready) {
      child.send({ op: 'shutdown' } satisfies EngineCommand);
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await this.exited;
      clearTimeout(killer);
    } else if (child) {
      child.kill('SIGKILL');
      await this.exited;
    }
    await Promise.allSettled([...this.storing]);
    // Whatever the engine could not finish (killed) still gets its terminal event.
    this.failInFlight('media engine closed');
    this.closed = true;
    const waiters = this.readyWaiters;
    this.readyWaiters = [];
    for (const w of waiters) w();
  }
}
