/**
 * Play, collect and record on an endpoint, and where its DTMF goes: each operation starts from a
 * command and ends with exactly one `*Done` / `*Failed` event, whatever ends it (completion, DTMF,
 * `stop`, `release`). The clock (tick.ts) moves them frame by frame and ends them here.
 */
import type { Logger } from 'pino';
import type { EngineMessage, EngineSettings } from '../ipc.js';
import type { CollectOptions, MediaEvent, PlayOptions, PlaySource, RecordOptions } from '../port.js';
import { MEDIA } from './constants.js';
import { badDigit, digitSchedule } from './dtmf.js';
import type { Endpoint } from './endpoint.js';
import type { EngineContext } from './engine-context.js';
import { PlayError } from './errors.js';
import { tone } from './pcm.js';
import { type RecordEnd, Recorder } from './recorder.js';
import type { PlayOp } from './running-ops.js';
import type { SourceLoader } from './sources.js';

/** The operations of every endpoint (see the file header). */
export class Operations {
  private readonly endpoints: Map<string, Endpoint>;
  private readonly settings: EngineSettings;
  private readonly logger: Logger;
  private readonly send: (msg: EngineMessage) => void;
  private readonly emit: (event: MediaEvent) => void;
  /** Recordings being finalised (their WAV written out). */
  private readonly finishing = new Set<Promise<void>>();
  private readonly beepTone = tone(MEDIA.BEEP_HZ, MEDIA.BEEP_MS);

  constructor(
    cx: EngineContext,
    private readonly loader: SourceLoader,
  ) {
    this.endpoints = cx.endpoints;
    this.settings = cx.settings;
    this.logger = cx.logger;
    this.send = cx.send;
    this.emit = cx.emit;
  }

  /** Resolves once every recording ended so far is written out. */
  async finished(): Promise<void> {
    await Promise.allSettled([...this.finishing]);
  }

  stopOps(ep: Endpoint, reason: 'stopped' | 'released'): void {
    if (ep.play) this.endPlay(ep, reason);
    if (ep.collect) this.endCollect(ep, reason);
    if (ep.record) this.endRecord(ep, reason, '');
    ep.beep = null;
  }

  play(id: string, opId: string, source: PlaySource, opts: PlayOptions): void {
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

  loadInto(ep: Endpoint, op: PlayOp, source: PlaySource): void {
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

  endPlay(ep: Endpoint, reason: 'completed' | 'interrupted' | 'stopped' | 'released'): void {
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

  collect(id: string, opId: string, opts: CollectOptions): void {
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

  endCollect(ep: Endpoint, reason: 'finish-key' | 'num-digits' | 'timeout' | 'stopped' | 'released') {
    const c = ep.collect;
    if (!c) return;
    ep.collect = null;
    this.emit({ type: 'media.collectDone', endpointId: ep.id, opId: c.opId, digits: c.digits, reason });
  }

  record(id: string, opId: string, opts: RecordOptions): void {
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

  endRecord(ep: Endpoint, reason: RecordEnd, digits: string): void {
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

  onDigit(ep: Endpoint, digit: string): void {
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
}
