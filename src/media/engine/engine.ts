/**
 * The media engine (runs in its own process, see entry.ts): endpoints keyed by the caller's id,
 * conference rooms, and the one 20 ms clock that drives everything. Each tick:
 *
 *   1. every endpoint takes one frame from its receive FIFO; running recordings consume it;
 *      collect timeouts are checked;
 *   2. every room mixes its unmuted participants once (Int32 sum);
 *   3. every endpoint sends one frame, chosen by precedence:
 *      beep > play > bridged peer's input > room mix minus itself (or wait music) > silence.
 *
 * Commands arrive as IPC messages and never throw; each outcome goes back as a `MediaEvent`.
 * Network input is handled in Endpoint and is never fatal.
 */
import { createSocket, type Socket } from 'node:dgram';
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { EngineCommand, EngineMessage, EngineSettings } from '../ipc.js';
import type {
  Codec,
  CollectOptions,
  ConferenceJoinOptions,
  MediaEvent,
  PlayOptions,
  PlaySource,
  RecordOptions,
} from '../port.js';
import { Clock, LoadWindow } from './clock.js';
import { Room } from './conference.js';
import { MEDIA } from './constants.js';
import { badDigit, type DigitStep, digitSchedule } from './dtmf.js';
import { Endpoint, type PlayOp, playFrame } from './endpoint.js';
import { PlayError } from './errors.js';
import { CODEC_PT } from './g711.js';
import { tone } from './pcm.js';
import { type RecordEnd, Recorder } from './recorder.js';
import type { RtpPacket } from './rtp.js';
import { answerDirection, buildSdp, negotiate } from './sdp.js';
import { SourceLoader } from './sources.js';
import { applyWebRtcSdp, openWebRtcEndpoint } from './webrtc/open.js';
import { isWebRtcSdp } from './webrtc/sdp.js';
import { WebRtcEndpoint } from './webrtc/webrtc-endpoint.js';

const ALL_CODECS: readonly Codec[] = ['PCMU', 'PCMA'];
const SILENCE = new Int16Array(MEDIA.FRAME_SAMPLES);
const LATE_TICK_MS = 5;

/** The engine: commands in, events out, one clock (see the file header). */
export class Engine {
  private readonly endpoints = new Map<string, Endpoint>();
  private readonly creating = new Set<string>();
  /** Released while their socket was still being bound: closed as soon as the bind completes. */
  private readonly cancelled = new Set<string>();
  private lastTickError = 0;
  private readonly rooms = new Map<string, Room>();
  private readonly load = new LoadWindow();
  private readonly clock: Clock;
  private readonly loader: SourceLoader;
  private readonly finishing = new Set<Promise<void>>();
  private nextPort: number;
  private readonly beepTone = tone(MEDIA.BEEP_HZ, MEDIA.BEEP_MS);
  private readonly roomBeepTone = tone(MEDIA.BEEP_HZ, MEDIA.CONFERENCE_BEEP_MS, 4000);
  private readonly frame = new Int16Array(MEDIA.FRAME_SAMPLES);
  /** Scratch frame of a `both` recording (the recorder copies what it keeps). */
  private readonly mixFrame = new Int16Array(MEDIA.FRAME_SAMPLES);

  constructor(
    private readonly settings: EngineSettings,
    private readonly send: (msg: EngineMessage) => void,
    private readonly logger: Logger,
  ) {
    this.nextPort = settings.rtpPortMin + (settings.rtpPortMin % 2);
    this.loader = new SourceLoader({
      cacheDir: settings.cacheDir,
      cacheMaxBytes: settings.cacheMaxBytes,
      maxDownloadBytes: settings.maxDownloadBytes,
      logger,
      blockPrivateUrls: settings.blockPrivateUrls,
      urlTimeoutMs: settings.urlTimeoutMs,
    });
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
        void this.create(cmd.endpointId, cmd.remoteSdp, cmd.codecs, cmd.webrtc ?? false);
        return;
      case 'applySdp':
        this.applySdp(cmd.endpointId, cmd.sdp);
        return;
      case 'play':
        this.play(cmd.endpointId, cmd.opId, cmd.source, cmd.opts);
        return;
      case 'collect':
        this.collect(cmd.endpointId, cmd.opId, cmd.opts);
        return;
      case 'record':
        this.record(cmd.endpointId, cmd.opId, cmd.opts);
        return;
      case 'stop': {
        const ep = this.endpoints.get(cmd.endpointId);
        if (ep) this.stopOps(ep, 'stopped');
        return;
      }
      case 'bridge':
        this.bridge(cmd.a, cmd.b);
        return;
      case 'unbridge': {
        const a = this.endpoints.get(cmd.a);
        if (a?.bridgePeer && a.bridgePeer.id === cmd.b) this.unbridge(a);
        return;
      }
      case 'confJoin':
        this.join(cmd.endpointId, cmd.opts);
        return;
      case 'confLeave': {
        const ep = this.endpoints.get(cmd.endpointId);
        if (ep) this.leave(ep);
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

  // ---------------------------------------------------------------- endpoints and SDP

  private async bindPort(): Promise<{ socket: Socket; port: number } | null> {
    const { rtpPortMin: min, rtpPortMax: max, rtpHost } = this.settings;
    const slots = Math.max(1, Math.floor((max - min) / 2) + 1);
    for (let i = 0; i < slots; i++) {
      const port = this.nextPort;
      this.nextPort += 2;
      if (this.nextPort > max) this.nextPort = min + (min % 2);
      if (port > max) continue;
      const socket = createSocket('udp4');
      const ok = await new Promise<boolean>((resolve) => {
        socket.once('error', () => resolve(false));
        socket.bind(port, rtpHost, () => resolve(true));
      });
      if (ok) {
        socket.removeAllListeners('error');
        return { socket, port };
      }
      socket.close();
    }
    return null;
  }

  private async create(
    id: string,
    remoteSdp: string | undefined,
    codecs: readonly Codec[] | undefined,
    webrtc: boolean,
  ) {
    if (this.endpoints.has(id) || this.creating.has(id)) {
      this.emit({
        type: 'media.endpointFailed',
        endpointId: id,
        reason: 'exists',
        message: `endpoint ${id} exists`,
      });
      return;
    }
    const allowed = codecs && codecs.length > 0 ? codecs.filter((c) => ALL_CODECS.includes(c)) : ALL_CODECS;
    if (webrtc || (remoteSdp !== undefined && isWebRtcSdp(remoteSdp))) {
      await this.createWebRtc(id, remoteSdp, allowed);
      return;
    }
    let negotiated: ReturnType<typeof negotiate> | null = null;
    if (remoteSdp !== undefined) {
      negotiated = negotiate(remoteSdp, allowed);
      if (!negotiated.ok) {
        this.emit({
          type: 'media.endpointFailed',
          endpointId: id,
          reason: negotiated.reason,
          message: negotiated.message,
        });
        return;
      }
    }
    this.creating.add(id);
    const bound = await this.bindPort();
    this.creating.delete(id);
    if (this.cancelled.delete(id)) {
      bound?.socket.close();
      this.emit({ type: 'media.released', endpointId: id });
      return;
    }
    if (!bound) {
      this.emit({
        type: 'media.endpointFailed',
        endpointId: id,
        reason: 'no-port',
        message: `no free RTP port in ${this.settings.rtpPortMin}-${this.settings.rtpPortMax}`,
      });
      return;
    }
    const ep = new Endpoint(
      id,
      bound.socket,
      this.settings.rtpHost,
      bound.port,
      allowed,
      (e, d) => this.onDigit(e, d),
      (e, pkt) => this.relayEvent(e, pkt),
    );
    this.endpoints.set(id, ep);
    if (negotiated?.ok) {
      ep.setRemote(negotiated.remote);
      ep.localSdp = this.answerSdp(ep);
    } else {
      ep.offered = true;
      ep.localSdp = buildSdp({
        address: ep.address,
        port: ep.port,
        sessionId: ep.sessionId,
        version: ep.sdpVersion,
        codecs: allowed.map((c) => ({ codec: c, pt: CODEC_PT[c] })),
        eventPt: MEDIA.TELEPHONE_EVENT_PT,
        direction: 'sendrecv',
      });
    }
    this.logger.debug({ endpointId: id, port: ep.port }, 'endpoint created');
    this.emit({
      type: 'media.endpointReady',
      endpoint: { endpointId: id, address: ep.address, port: ep.port, sdp: ep.localSdp },
    });
  }

  /** The WebRTC seam: same bookkeeping and events as `create`, transport from webrtc/. */
  private async createWebRtc(id: string, remoteSdp: string | undefined, allowed: readonly Codec[]) {
    this.creating.add(id);
    const probe = await this.bindPort();
    if (probe) await new Promise<void>((resolve) => probe.socket.close(() => resolve()));
    const opened = probe
      ? await openWebRtcEndpoint({
          id,
          host: this.settings.rtpHost,
          port: probe.port,
          publicAddresses: this.settings.webrtcPublicAddresses ?? [],
          codecs: allowed,
          order: this.settings.webrtcCodecs ?? ['opus', 'PCMU', 'PCMA'],
          remoteSdp,
          onDigit: (e, d) => this.onDigit(e, d),
          onEvent: (e, pkt) => this.relayEvent(e, pkt),
          onState: (e, state) => this.logger.debug({ endpointId: e.id, state }, 'webrtc connection state'),
        })
      : null;
    this.creating.delete(id);
    if (this.cancelled.delete(id)) {
      if (opened?.ok) opened.ep.close();
      this.emit({ type: 'media.released', endpointId: id });
      return;
    }
    if (!opened) {
      this.emit({
        type: 'media.endpointFailed',
        endpointId: id,
        reason: 'no-port',
        message: `no free RTP port in ${this.settings.rtpPortMin}-${this.settings.rtpPortMax}`,
      });
      return;
    }
    if (!opened.ok) {
      this.emit({
        type: 'media.endpointFailed',
        endpointId: id,
        reason: opened.reason,
        message: opened.message,
      });
      return;
    }
    const ep = opened.ep;
    this.endpoints.set(id, ep);
    this.logger.debug({ endpointId: id, port: ep.port }, 'webrtc endpoint created');
    this.emit({
      type: 'media.endpointReady',
      endpoint: { endpointId: id, address: ep.address, port: ep.port, sdp: ep.localSdp },
    });
  }

  /** A bridge carries DTMF too (Dial to an IVR): unless muted, the peer relays the event. */
  private relayEvent(e: Endpoint, pkt: RtpPacket): void {
    if (e.bridgePeer && !e.muted) e.bridgePeer.relayEvent(pkt, e.tsPerTick);
  }

  private async applyWebRtc(ep: WebRtcEndpoint, sdp: string): Promise<void> {
    const r = await applyWebRtcSdp(ep, sdp);
    if (this.endpoints.get(ep.id) !== ep) return;
    if (!r.ok) {
      this.emit({ type: 'media.endpointFailed', endpointId: ep.id, reason: r.reason, message: r.message });
      return;
    }
    this.emit({ type: 'media.sdpApplied', endpointId: ep.id, sdp: ep.localSdp, codec: r.codec });
  }

  private answerSdp(ep: Endpoint): string {
    const r = ep.remote!;
    return buildSdp({
      address: ep.address,
      port: ep.port,
      sessionId: ep.sessionId,
      version: ep.sdpVersion,
      codecs: [{ codec: r.codec, pt: r.codecPt }],
      eventPt: r.eventPt,
      direction: answerDirection(r.direction),
    });
  }

  private applySdp(id: string, sdp: string): void {
    const ep = this.endpoints.get(id);
    if (!ep) {
      this.emit({
        type: 'media.endpointFailed',
        endpointId: id,
        reason: 'no-such-endpoint',
        message: `no endpoint ${id}`,
      });
      return;
    }
    if (ep instanceof WebRtcEndpoint) {
      void this.applyWebRtc(ep, sdp);
      return;
    }
    const n = negotiate(sdp, ep.codecs);
    if (!n.ok) {
      this.emit({ type: 'media.endpointFailed', endpointId: id, reason: n.reason, message: n.message });
      return;
    }
    ep.setRemote(n.remote);
    if (ep.offered) {
      // The answer to our offer: our SDP stands (RFC 3264 §6).
      ep.offered = false;
    } else {
      // A new offer (re-INVITE): answer it with a new version.
      ep.sdpVersion++;
      ep.localSdp = this.answerSdp(ep);
    }
    this.emit({ type: 'media.sdpApplied', endpointId: id, sdp: ep.localSdp, codec: n.remote.codec });
  }

  private release(id: string): void {
    const ep = this.endpoints.get(id);
    if (!ep && this.creating.has(id)) {
      this.cancelled.add(id);
      return;
    }
    if (!ep) {
      this.emit({ type: 'media.released', endpointId: id });
      return;
    }
    this.stopOps(ep, 'released');
    if (ep.room) this.leave(ep);
    if (ep.bridgePeer) this.unbridge(ep);
    ep.close();
    this.endpoints.delete(id);
    this.emit({ type: 'media.released', endpointId: id });
  }

  /** Releases everything and waits for recordings to be finalised (engine shutdown). */
  async shutdown(): Promise<void> {
    this.clock.stop();
    for (const id of [...this.endpoints.keys()]) this.release(id);
    await Promise.allSettled([...this.finishing]);
  }

  // ---------------------------------------------------------------- operations

  private stopOps(ep: Endpoint, reason: 'stopped' | 'released'): void {
    if (ep.play) this.endPlay(ep, reason);
    if (ep.collect) this.endCollect(ep, reason);
    if (ep.record) this.endRecord(ep, reason, '');
    ep.beep = null;
  }

  private play(id: string, opId: string, source: PlaySource, opts: PlayOptions): void {
    const ep = this.endpoints.get(id);
    if (!ep) {
      this.emit({
        type: 'media.playFailed',
        endpointId: id,
        opId,
        reason: 'no-such-endpoint',
        message: `no endpoint ${id}`,
      });
      return;
    }
    if (ep.play) this.endPlay(ep, 'stopped');
    const loop = opts.loop ?? 1;
    if (source.kind === 'digits' && ep.sendsEvents) {
      const bad = badDigit(source.digits);
      if (bad !== null) {
        this.emit({
          type: 'media.playFailed',
          endpointId: id,
          opId,
          reason: 'bad-digits',
          message: `not a DTMF digit: ${JSON.stringify(bad)}`,
        });
        return;
      }
      ep.play = {
        opId,
        interruptOnDtmf: false,
        internal: false,
        pcm: null,
        pos: 0,
        loopsLeft: 1,
        script: digitSchedule(source.digits),
      };
      return;
    }
    const op: PlayOp = {
      opId,
      interruptOnDtmf: opts.interruptOnDtmf ?? false,
      internal: false,
      pcm: null,
      pos: 0,
      loopsLeft: loop <= 0 ? Number.POSITIVE_INFINITY : loop,
    };
    ep.play = op;
    this.loadInto(ep, op, source);
  }

  private loadInto(ep: Endpoint, op: PlayOp, source: PlaySource): void {
    this.loader.load(source).then(
      (pcm) => {
        op.pcm = pcm;
      },
      (err: unknown) => {
        const current = op.internal ? ep.waitMusic === op : ep.play === op;
        if (!current) return;
        const reason = err instanceof PlayError ? err.reason : 'not-audio';
        const message = err instanceof Error ? err.message : String(err);
        this.logger.warn({ endpointId: ep.id, opId: op.opId, reason, message }, 'play failed');
        if (op.internal) {
          ep.waitMusic = null;
          return;
        }
        ep.play = null;
        this.emit({ type: 'media.playFailed', endpointId: ep.id, opId: op.opId, reason, message });
        this.promptEnded(ep);
      },
    );
  }

  private endPlay(ep: Endpoint, reason: 'completed' | 'interrupted' | 'stopped' | 'released'): void {
    const op = ep.play;
    if (!op) return;
    ep.play = null;
    this.emit({ type: 'media.playDone', endpointId: ep.id, opId: op.opId, reason });
    this.promptEnded(ep);
  }

  /** A collect's timeout starts when the prompt before it ends (Gather semantics). */
  private promptEnded(ep: Endpoint): void {
    if (ep.collect) ep.collect.lastActivity = performance.now();
  }

  private collect(id: string, opId: string, opts: CollectOptions): void {
    const ep = this.endpoints.get(id);
    if (!ep) {
      this.emit({ type: 'media.collectDone', endpointId: id, opId, digits: '', reason: 'released' });
      return;
    }
    if (ep.collect) this.endCollect(ep, 'stopped');
    ep.collect = {
      opId,
      timeoutMs: Math.max(0, opts.timeoutSeconds) * 1000,
      finishOnKey: opts.finishOnKey,
      numDigits: opts.numDigits,
      digits: '',
      lastActivity: performance.now(),
    };
    const buffered = ep.digitBuffer;
    ep.digitBuffer = '';
    for (const d of buffered) {
      if (!ep.collect) {
        ep.digitBuffer += d;
        continue;
      }
      this.feedCollect(ep, d);
    }
  }

  private feedCollect(ep: Endpoint, digit: string): void {
    const c = ep.collect!;
    c.lastActivity = performance.now();
    if (c.finishOnKey !== '' && c.finishOnKey.includes(digit)) {
      this.endCollect(ep, 'finish-key');
      return;
    }
    c.digits += digit;
    if (c.numDigits !== undefined && c.digits.length >= c.numDigits) this.endCollect(ep, 'num-digits');
  }

  private endCollect(ep: Endpoint, reason: 'finish-key' | 'num-digits' | 'timeout' | 'stopped' | 'released') {
    const c = ep.collect;
    if (!c) return;
    ep.collect = null;
    this.emit({ type: 'media.collectDone', endpointId: ep.id, opId: c.opId, digits: c.digits, reason });
  }

  private record(id: string, opId: string, opts: RecordOptions): void {
    const ep = this.endpoints.get(id);
    if (!ep) {
      this.emit({
        type: 'media.recordFailed',
        endpointId: id,
        opId,
        recordingSid: opts.recordingSid,
        message: `no endpoint ${id}`,
      });
      return;
    }
    if (ep.record) this.endRecord(ep, 'stopped', '');
    const op = {
      opId,
      recorder: new Recorder(opId, opts, this.settings.spoolDir),
      state: 'beep' as 'beep' | 'recording',
    };
    ep.record = op;
    if (opts.playBeep) {
      ep.beep = {
        pcm: this.beepTone,
        pos: 0,
        onDone: () => {
          op.state = 'recording';
          ep.fifo.clear();
        },
      };
    } else {
      op.state = 'recording';
    }
  }

  private endRecord(ep: Endpoint, reason: RecordEnd, digits: string): void {
    const op = ep.record;
    if (!op) return;
    ep.record = null;
    if (op.state === 'beep') ep.beep = null;
    const { recordingSid } = op.recorder.opts;
    const p = op.recorder.finish().then(
      ({ path, durationSeconds }) => {
        this.send({
          kind: 'recorded',
          endpointId: ep.id,
          opId: op.opId,
          recordingSid,
          path,
          durationSeconds,
          digits,
          reason,
        });
      },
      (err: unknown) => {
        this.emit({
          type: 'media.recordFailed',
          endpointId: ep.id,
          opId: op.opId,
          recordingSid,
          message: `recording could not be written: ${(err as Error).message}`,
        });
      },
    );
    this.finishing.add(p);
    void p.finally(() => this.finishing.delete(p));
  }

  private onDigit(ep: Endpoint, digit: string): void {
    this.emit({ type: 'media.dtmf', endpointId: ep.id, digit });
    if (ep.play?.interruptOnDtmf) this.endPlay(ep, 'interrupted');
    if (ep.record?.recorder.opts.finishOnKey.includes(digit)) {
      this.endRecord(ep, 'finish-key', digit);
      return;
    }
    if (ep.collect) {
      this.feedCollect(ep, digit);
      return;
    }
    ep.digitBuffer = (ep.digitBuffer + digit).slice(-MEDIA.DIGIT_BUFFER_MAX);
  }

  // ---------------------------------------------------------------- bridge and conference

  private bridge(aId: string, bId: string): void {
    const a = this.endpoints.get(aId);
    const b = this.endpoints.get(bId);
    if (!a || !b || a === b) {
      this.logger.warn({ a: aId, b: bId }, 'bridge: unknown endpoint');
      return;
    }
    for (const ep of [a, b]) {
      if (ep.room) this.leave(ep);
      if (ep.bridgePeer) this.unbridge(ep);
    }
    a.bridgePeer = b;
    b.bridgePeer = a;
  }

  private unbridge(ep: Endpoint): void {
    const peer = ep.bridgePeer;
    ep.bridgePeer = null;
    if (peer && peer.bridgePeer === ep) peer.bridgePeer = null;
  }

  private join(id: string, opts: ConferenceJoinOptions): void {
    const ep = this.endpoints.get(id);
    if (!ep) {
      this.logger.warn({ endpointId: id }, 'conference join: unknown endpoint');
      return;
    }
    if (ep.bridgePeer) this.unbridge(ep);
    if (ep.room === opts.room) return;
    if (ep.room) this.leave(ep);
    let room = this.rooms.get(opts.room);
    if (!room) {
      room = new Room(opts.room);
      this.rooms.set(opts.room, room);
    }
    room.add(ep);
    ep.room = opts.room;
    ep.roomBeep = opts.beep ?? false;
    if (opts.muted !== undefined) ep.muted = opts.muted;
    if (opts.beep) room.beep(this.roomBeepTone);
    if (opts.waitMusic) {
      const op: PlayOp = {
        opId: `${id}:wait`,
        interruptOnDtmf: false,
        internal: true,
        pcm: null,
        pos: 0,
        loopsLeft: Infinity,
      };
      ep.waitMusic = op;
      this.loadInto(ep, op, opts.waitMusic);
    }
    this.emit({
      type: 'media.conferenceJoined',
      endpointId: id,
      room: opts.room,
      participants: room.members.size,
    });
  }

  private leave(ep: Endpoint): void {
    const name = ep.room;
    if (!name) return;
    const room = this.rooms.get(name);
    ep.room = null;
    ep.waitMusic = null;
    let left = 0;
    if (room) {
      room.remove(ep);
      left = room.members.size;
      if (left === 0) this.rooms.delete(name);
      else if (ep.roomBeep) room.beep(this.roomBeepTone);
    }
    this.emit({ type: 'media.conferenceLeft', endpointId: ep.id, room: name, participants: left });
  }

  // ---------------------------------------------------------------- the clock

  /** One clock tick; a bug here is logged (at most once a second) rather than stopping the clock. */
  private tick(lateMs: number): void {
    try {
      this.runTick(lateMs);
    } catch (err) {
      const now = Date.now();
      if (now - this.lastTickError > 1000) {
        this.lastTickError = now;
        this.logger.error({ err }, 'media tick failed');
      }
    }
  }

  private runTick(lateMs: number): void {
    const now = performance.now();
    const late = lateMs > LATE_TICK_MS;
    for (const ep of this.endpoints.values()) {
      if (late) ep.lateTicks++;
      ep.pullInput();
    }
    // Recordings once every input is in: a `both` recording also takes its bridge peer's frame.
    for (const ep of this.endpoints.values()) {
      const rec = ep.record;
      if (rec && rec.state === 'recording') {
        const end = rec.recorder.push(this.recordedFrame(ep, rec.recorder.opts.mix ?? 'in'));
        if (end) this.endRecord(ep, end, '');
      }
      const c = ep.collect;
      if (c) {
        if (ep.play && !ep.play.internal) c.lastActivity = now;
        else if (now - c.lastActivity >= c.timeoutMs) this.endCollect(ep, 'timeout');
      }
    }
    for (const room of this.rooms.values()) room.mixTick();
    const out = this.frame;
    for (const ep of this.endpoints.values()) {
      const play = ep.play;
      if (play?.script && !ep.beep) this.scriptTick(ep, play, play.script);
      else ep.send(this.output(ep, out), SILENCE);
    }
  }

  /** What a recording on `ep` takes this tick: its input, or its input mixed with its bridge peer's. */
  private recordedFrame(ep: Endpoint, mix: 'in' | 'both'): Int16Array {
    const own = ep.hasInput ? ep.inFrame : SILENCE;
    const peer = ep.bridgePeer;
    if (mix === 'in' || !peer?.hasInput || peer.muted) return own;
    const out = this.mixFrame;
    const other = peer.inFrame;
    for (let i = 0; i < out.length; i++) {
      const v = (own[i] ?? 0) + (other[i] ?? 0);
      out[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
    }
    return out;
  }

  /** One tick of Play digits as RFC 4733 events. */
  private scriptTick(ep: Endpoint, play: PlayOp, script: readonly (DigitStep | null)[]): void {
    const step = script[play.pos];
    play.pos++;
    if (step === undefined) {
      ep.send(null, SILENCE);
      this.endPlay(ep, 'completed');
      return;
    }
    ep.sendEvent(step, SILENCE);
  }

  private output(ep: Endpoint, out: Int16Array): Int16Array | null {
    const beep = ep.beep;
    if (beep) {
      const n = Math.min(out.length, beep.pcm.length - beep.pos);
      out.set(beep.pcm.subarray(beep.pos, beep.pos + n));
      out.fill(0, n);
      beep.pos += n;
      if (beep.pos >= beep.pcm.length) {
        ep.beep = null;
        beep.onDone();
      }
      return out;
    }
    const play = ep.play;
    if (play) {
      if (!play.pcm) return null;
      const more = playFrame(play, out);
      if (play.loopsLeft <= 0 || play.pcm.length === 0 || (!more && play.pos >= play.pcm.length)) {
        this.endPlay(ep, 'completed');
      }
      return more ? out : null;
    }
    const peer = ep.bridgePeer;
    if (peer) return peer.hasInput && !peer.muted ? peer.inFrame : null;
    if (ep.room) {
      const room = this.rooms.get(ep.room);
      if (room) return room.hear(ep, out);
    }
    return null;
  }
}
