/**
 * The work of one 20 ms tick, in three passes over the endpoints:
 *
 *   1. every endpoint takes one frame from its receive FIFO; running recordings consume it;
 *      collect timeouts are checked;
 *   2. every room mixes its unmuted participants once (Int32 sum);
 *   3. every endpoint sends one frame, chosen by precedence:
 *      beep > play > bridged peer's input > room mix minus itself (or wait music) > silence.
 */
import type { Room } from './conference.js';
import type { Connections } from './connections.js';
import { MEDIA } from './constants.js';
import type { DigitStep } from './dtmf.js';
import type { Endpoint } from './endpoint.js';
import type { Operations } from './operations.js';
import { type PlayOp, type PromptFrameRef, playFrame } from './running-ops.js';

const SILENCE = new Int16Array(MEDIA.FRAME_SAMPLES);
const LATE_TICK_MS = 5;

/** One tick's frame work (see the file header). */
export class FrameTick {
  private readonly rooms: ReadonlyMap<string, Room>;
  private readonly frame = new Int16Array(MEDIA.FRAME_SAMPLES);
  /** Scratch frame of a `both` recording (the recorder copies what it keeps). */
  private readonly mixFrame = new Int16Array(MEDIA.FRAME_SAMPLES);
  /** Set by `output` when its frame is a whole prompt frame, unmodified (reused: no allocation). */
  private readonly promptRef: { pcm: Int16Array; index: number } = { pcm: SILENCE, index: 0 };
  private prompt: PromptFrameRef | undefined;

  constructor(
    private readonly endpoints: ReadonlyMap<string, Endpoint>,
    private readonly ops: Operations,
    connections: Connections,
  ) {
    this.rooms = connections.rooms;
  }

  /** Runs one tick; `lateMs` is how late the clock fired it. */
  run(lateMs: number): void {
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
        if (end) this.ops.endRecord(ep, end, '');
      }
      const c = ep.collect;
      if (c) {
        if (ep.play && !ep.play.internal) c.lastActivity = now;
        else if (now - c.lastActivity >= c.timeoutMs) this.ops.endCollect(ep, 'timeout');
      }
    }
    for (const room of this.rooms.values()) room.mixTick();
    const out = this.frame;
    for (const ep of this.endpoints.values()) {
      const play = ep.play;
      if (play?.script && !ep.beep) this.scriptTick(ep, play, play.script);
      else {
        const frame = this.output(ep, out);
        ep.send(frame, SILENCE, this.prompt);
      }
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
      this.ops.endPlay(ep, 'completed');
      return;
    }
    ep.sendEvent(step, SILENCE);
  }

  private output(ep: Endpoint, out: Int16Array): Int16Array | null {
    this.prompt = undefined;
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
      const pcm = play.pcm;
      if (!pcm) return null;
      // Where this frame starts unless a loop ends within it (playFrame wraps at the end).
      const start = play.pos >= pcm.length ? 0 : play.pos;
      const more = playFrame(play, out);
      // One unbroken, aligned stretch of the prompt (no wrap, no zero padding): let the encoder
      // share it with other legs playing the same prompt.
      if (more && play.pos === start + out.length && start % out.length === 0) {
        this.promptRef.pcm = pcm;
        this.promptRef.index = start / out.length;
        this.prompt = this.promptRef;
      }
      if (play.loopsLeft <= 0 || pcm.length === 0 || (!more && play.pos >= pcm.length)) {
        this.ops.endPlay(ep, 'completed');
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
