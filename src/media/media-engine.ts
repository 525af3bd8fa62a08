/**
 * `MediaEngine`: the main-process implementation of the media port. It forks the engine process
 * (engine-process.ts; engine/entry.ts runs its own event loop and 20 ms clock), forwards commands
 * over IPC in one batch per turn of the event loop (command-outbox.ts), turns the engine's messages
 * into `MediaEvent`s, stores finished recordings through the recording-storage port
 * (recording-uploads.ts), and supervises the process: when it dies, every operation in flight gets
 * its terminal event, every endpoint it held gets `media.endpointLost` (engine-ledger.ts), and a
 * new engine is started (backoff doubling from `restartMinMs` to `restartMaxMs`). Commands issued
 * while the engine restarts are held and sent when it is ready.
 */
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { RecordingStorage } from '../recordings/storage.js';
import { CommandOutbox } from './command-outbox.js';
import { EngineLedger } from './engine-ledger.js';
import { forkEngine } from './engine-process.js';
import { EngineQueries, type EngineReply, NO_LOAD } from './engine-queries.js';
import {
  type EngineCommand,
  type EngineLoadReport,
  type EngineMessage,
  type EngineSettings,
  endpointOfMessage,
} from './ipc.js';
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
import { type RecordedMessage, RecordingUploads } from './recording-uploads.js';
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

/** Why commands and operations end once the port is closed. */
const CLOSED = 'media engine closed';

/** The media port over a supervised engine process (see the file header). */
export class MediaEngine implements MediaPort {
  private child: ChildProcess | null = null;
  private ready = false;
  private closing = false;
  private closed = false;
  private readonly outbox = new CommandOutbox({
    canSend: () => this.canSend(),
    send: (message) => this.child!.send(message),
  });
  private readonly listeners = new Set<(e: MediaEvent) => void>();
  private readonly ledger = new EngineLedger((e) => this.dispatch(e));
  private readonly queries: EngineQueries;
  private readonly uploads: RecordingUploads;
  private restarts = 0;
  private backoffMs: number;
  private restartTimer: NodeJS.Timeout | null = null;
  private readyWaiters: (() => void)[] = [];
  private exited: Promise<void> = Promise.resolve();

  constructor(private readonly o: MediaEngineOptions) {
    this.backoffMs = o.restartMinMs ?? 100;
    this.uploads = new RecordingUploads(o.storage, o.logger);
    this.queries = new EngineQueries(o.queryTimeoutMs ?? 2000);
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
    return this.ledger.endpointCount;
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
    this.ready = false;
    let resolveExit!: () => void;
    this.exited = new Promise((r) => {
      resolveExit = r;
    });
    const child = forkEngine({
      settings,
      logger: this.o.logger,
      priority: this.o.priority,
      execArgv: this.o.engineExecArgv,
      onMessage: (m) => {
        if (!Array.isArray(m)) this.onMessageGuarded(m);
        else for (const one of m) this.onMessageGuarded(one);
      },
      onExit: (code, signal) => {
        resolveExit();
        if (this.child === child) this.onExit(code, signal);
      },
    });
    this.child = child;
  }

  private onExit(code: number | null, signal: string | null): void {
    this.child = null;
    this.ready = false;
    this.queries.abandonAll();
    if (this.closing) return;
    this.o.logger.error(
      { code, signal, endpoints: this.ledger.endpointCount },
      'media engine died; restarting',
    );
    this.failInFlight('engine crashed');
    this.restarts++;
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, this.o.restartMaxMs ?? 5000);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (!this.closing) this.spawn();
    }, delay);
  }

  /** Every operation in flight ends, then every endpoint is reported lost. */
  private failInFlight(reason: string): void {
    // Commands queued for the engine that just died are answered here, so that none of them
    // reaches the next engine and produces a second terminal event.
    for (const cmd of this.outbox.takeHeld()) this.ledger.refuse(cmd, reason);
    this.ledger.loseAll(reason);
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
    if (!this.ledger.abandon(endpointId, reason)) return;
    // After whatever is still on its way for it, so the release is the engine's last word on it.
    if (this.canSend()) this.outbox.post({ op: 'release', endpointId });
  }

  private onMessage(msg: EngineMessage): void {
    switch (msg.kind) {
      case 'ready': {
        this.ready = true;
        this.backoffMs = this.o.restartMinMs ?? 100;
        this.outbox.postHeld();
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
      case 'load':
        this.queries.answer(msg);
        return;
    }
  }

  private onEvent(e: MediaEvent): void {
    if (this.ledger.accept(e)) this.dispatch(e);
  }

  private onRecorded(msg: RecordedMessage): void {
    this.ledger.opStoring(msg.opId);
    this.uploads.store(msg, (e) => {
      this.ledger.opEnded(e.opId);
      this.dispatch(e);
    });
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

  /** Whether the engine is up and its channel open. */
  private canSend(): boolean {
    return this.ready && this.child?.connected === true;
  }

  /** Sends when ready, else holds for the (re)started engine; after close, answers locally. */
  private command(cmd: EngineCommand): void {
    if (this.closed || this.closing) {
      this.ledger.refuse(cmd, CLOSED);
      return;
    }
    this.outbox.submit(cmd);
  }

  // ---------------------------------------------------------------- MediaPort

  createEndpoint(
    endpointId: string,
    opts?: { readonly remoteSdp?: string; readonly codecs?: readonly Codec[]; readonly webrtc?: boolean },
  ) {
    if (!this.closing) this.ledger.endpointCreating(endpointId);
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
    this.ledger.opStarted(opId, { kind: 'play', endpointId });
    this.command({ op: 'play', endpointId, opId, source, opts });
  }

  collect(endpointId: string, opId: string, opts: CollectOptions): void {
    this.ledger.opStarted(opId, { kind: 'collect', endpointId });
    this.command({ op: 'collect', endpointId, opId, opts });
  }

  record(endpointId: string, opId: string, opts: RecordOptions): void {
    this.ledger.opStarted(opId, { kind: 'record', endpointId, recordingSid: opts.recordingSid });
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

  private query<T extends EngineReply>(build: (reqId: number) => EngineCommand): Promise<T | null> {
    if (!this.canSend()) return Promise.resolve(null);
    return this.queries.ask<T>((reqId) => this.child!.send(build(reqId)));
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
    return { ...(r?.load ?? NO_LOAD), restarts: this.restarts };
  }

  /** Releases every endpoint (their terminal events are delivered), stores recordings, stops the process. */
  async close(): Promise<void> {
    if (this.closing) {
      await this.exited;
      await this.uploads.settled();
      return;
    }
    this.closing = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    // This turn's commands reach the engine before its shutdown; those held for an engine that is
    // not up are answered here.
    for (const cmd of this.outbox.takeHeld()) this.ledger.refuse(cmd, CLOSED);
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
    await this.uploads.settled();
    // Whatever the engine could not finish (killed) still gets its terminal event.
    this.failInFlight(CLOSED);
    this.closed = true;
    const waiters = this.readyWaiters;
    this.readyWaiters = [];
    for (const w of waiters) w();
  }
}
