/**
 * The media engine (runs in its own process, see entry.ts): endpoints keyed by the caller's id,
 * and the one 20 ms clock that drives everything. Commands arrive as IPC messages and never throw;
 * each outcome goes back as a `MediaEvent`. The work is done by its parts, which share one map of
 * endpoints (engine-context.ts): creation and SDP (endpoint-setup.ts), play, collect and record
 * (operations.ts), bridges and conference rooms (connections.ts), and each tick's frames
 * (tick.ts). Network input is handled in Endpoint and is never fatal.
 */
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { EngineCommand, EngineMessage, EngineSettings } from '../ipc.js';
import type { MediaEvent } from '../port.js';
import { Clock, LoadWindow } from './clock.js';
import { Connections } from './connections.js';
import type { Endpoint } from './endpoint.js';
import { EndpointSetup } from './endpoint-setup.js';
import type { EngineContext } from './engine-context.js';
import { Operations } from './operations.js';
import { SourceLoader } from './sources.js';
import { FrameTick } from './tick.js';

/** The engine: commands in, events out, one clock (see the file header). */
export class Engine {
  private readonly endpoints = new Map<string, Endpoint>();
  private lastTickError = 0;
  private readonly load = new LoadWindow();
  private readonly clock: Clock;
  private readonly loader: SourceLoader;
  private readonly ops: Operations;
  private readonly connections: Connections;
  private readonly setup: EndpointSetup;
  private readonly frames: FrameTick;

  constructor(
    private readonly settings: EngineSettings,
    private readonly send: (msg: EngineMessage) => void,
    private readonly logger: Logger,
  ) {
    this.loader = new SourceLoader({
      cacheDir: settings.cacheDir,
      cacheMaxBytes: settings.cacheMaxBytes,
      maxDownloadBytes: settings.maxDownloadBytes,
      logger,
      blockPrivateUrls: settings.blockPrivateUrls,
      urlTimeoutMs: settings.urlTimeoutMs,
    });
    const cx: EngineContext = {
      endpoints: this.endpoints,
      settings,
      logger,
      send,
      emit: (event) => this.emit(event),
    };
    this.ops = new Operations(cx, this.loader);
    this.connections = new Connections(cx, this.ops);
    this.setup = new EndpointSetup(cx, this.ops, this.connections);
    this.frames = new FrameTick(this.endpoints, this.ops, this.connections);
    this.clock = new Clock((late) => this.tick(late), this.load);
    void this.removeOrphanedSpool();
  }

  /**
   * Recordings that were running when a previous engine died leave their spool files behind (the
   * calls were told `media.recordFailed`); anything untouched for an hour is such an orphan.
   */
  private async removeOrphanedSpool(): Promise<void> {
    const dir = this.settings.spoolDir;
    const cutoff = Date.now() - 3_600_000;
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const path = join(dir, name);
      const s = await stat(path).catch(() => null);
      if (s?.isFile() && s.mtimeMs < cutoff) await rm(path, { force: true }).catch(() => {});
    }
  }

  start(): void {
    this.clock.start();
  }

  private emit(event: MediaEvent): void {
    this.send({ kind: 'event', event });
  }

  /** Dispatches one command; never throws. */
  handle(cmd: EngineCommand): void {
    try {
      this.dispatch(cmd);
    } catch (err) {
      this.logger.error({ err, op: cmd.op }, 'media command failed');
    }
  }

  private dispatch(cmd: EngineCommand): void {
    switch (cmd.op) {
      case 'init':
      case 'shutdown':
        return;
      case 'create':
        void this.setup.create(cmd.endpointId, cmd.remoteSdp, cmd.codecs, cmd.webrtc ?? false);
        return;
      case 'applySdp':
        this.setup.applySdp(cmd.endpointId, cmd.sdp);
        return;
      case 'play':
        this.ops.play(cmd.endpointId, cmd.opId, cmd.source, cmd.opts);
        return;
      case 'collect':
        this.ops.collect(cmd.endpointId, cmd.opId, cmd.opts);
        return;
      case 'record':
        this.ops.record(cmd.endpointId, cmd.opId, cmd.opts);
        return;
      case 'stop': {
        const ep = this.endpoints.get(cmd.endpointId);
        if (ep) this.ops.stopOps(ep, 'stopped');
        return;
      }
      case 'bridge':
        this.connections.bridge(cmd.a, cmd.b);
        return;
      case 'unbridge': {
        const a = this.endpoints.get(cmd.a);
        if (a?.bridgePeer && a.bridgePeer.id === cmd.b) this.connections.unbridge(a);
        return;
      }
      case 'confJoin':
        this.connections.join(cmd.endpointId, cmd.opts);
        return;
      case 'confLeave': {
        const ep = this.endpoints.get(cmd.endpointId);
        if (ep) this.connections.leave(ep);
        return;
      }
      case 'mute': {
        const ep = this.endpoints.get(cmd.endpointId);
        if (ep) ep.muted = cmd.muted;
        return;
      }
      case 'release':
        this.release(cmd.endpointId);
        return;
      case 'stats':
        this.send({
          kind: 'stats',
          reqId: cmd.reqId,
          stats: this.endpoints.get(cmd.endpointId)?.stats() ?? null,
        });
        return;
      case 'load': {
        const w = this.load.take();
        this.send({
          kind: 'load',
          reqId: cmd.reqId,
          load: {
            endpoints: this.endpoints.size,
            tickLateP50Ms: w.lateP50Ms,
            tickLateP99Ms: w.lateP99Ms,
            tickLateMaxMs: w.lateMaxMs,
            tickWorkP50Ms: w.workP50Ms,
            tickWorkP99Ms: w.workP99Ms,
            tickWorkMaxMs: w.workMaxMs,
            cpuPercent: w.cpuPercent,
            rssBytes: process.memoryUsage.rss(),
            ticks: w.ticks,
            skippedTicks: w.skippedTicks,
          },
        });
        return;
      }
    }
  }

  private release(id: string): void {
    const ep = this.endpoints.get(id);
    if (!ep && this.setup.cancel(id)) return;
    if (!ep) {
      this.emit({ type: 'media.released', endpointId: id });
      return;
    }
    this.ops.stopOps(ep, 'released');
    if (ep.room) this.connections.leave(ep);
    if (ep.bridgePeer) this.connections.unbridge(ep);
    ep.close();
    this.endpoints.delete(id);
    this.emit({ type: 'media.released', endpointId: id });
  }

  /** Releases everything and waits for recordings to be finalised (engine shutdown). */
  async shutdown(): Promise<void> {
    this.clock.stop();
    for (const id of [...this.endpoints.keys()]) this.release(id);
    await this.ops.finished();
  }

  // ---------------------------------------------------------------- the clock

  /** One clock tick; a bug here is logged (at most once a second) rather than stopping the clock. */
  private tick(lateMs: number): void {
    try {
      this.frames.run(lateMs);
    } catch (err) {
      const now = Date.now();
      if (now - this.lastTickError > 1000) {
        this.lastTickError = now;
        this.logger.error({ err }, 'media tick failed');
      }
    }
  }
}
