/**
 * The operations running on an endpoint (play, collect, record, beep): plain state the engine owns
 * and steps every tick, and the copy of a play's next frame.
 */
import type { DigitStep } from './dtmf.js';
import type { Recorder } from './recorder.js';

/** A running play (user prompt, or a room's wait music when `internal`). */
export interface PlayOp {
  readonly opId: string;
  readonly interruptOnDtmf: boolean;
  readonly internal: boolean;
  pcm: Int16Array | null;
  /** Play digits as RFC 4733 events: one step per tick instead of audio. */
  readonly script?: readonly (DigitStep | null)[];
  pos: number;
  /** Plays left including the current one; Infinity for `loop=0`. */
  loopsLeft: number;
}

/** A running DTMF collect (Gather). */
export interface CollectOp {
  readonly opId: string;
  readonly timeoutMs: number;
  readonly finishOnKey: string;
  readonly numDigits: number | undefined;
  digits: string;
  /** Time of the last digit, or of the end of the prompt; the timeout runs from here. */
  lastActivity: number;
}

/** A running record: `beep` while its beep plays, then `recording`. */
export interface RecordOp {
  readonly opId: string;
  readonly recorder: Recorder;
  state: 'beep' | 'recording';
}

/** Copies the next frame of `op` into `out` (looping as asked); false once the play has nothing left. */
export function playFrame(op: PlayOp, out: Int16Array): boolean {
  const pcm = op.pcm!;
  let filled = 0;
  while (filled < out.length) {
    if (op.pos >= pcm.length) {
      op.loopsLeft--;
      if (op.loopsLeft <= 0 || pcm.length === 0) break;
      op.pos = 0;
    }
    const n = Math.min(out.length - filled, pcm.length - op.pos);
    out.set(pcm.subarray(op.pos, op.pos + n), filled);
    op.pos += n;
    filled += n;
  }
  out.fill(0, filled);
  return filled > 0;
}

/** A sent frame that is exactly frame `index` of a prompt's PCM, unmodified (an encoder may share it). */
export interface PromptFrameRef {
  readonly pcm: Int16Array;
  readonly index: number;
}

/** A short sound that overrides every other output (the beep before Record). */
export interface BeepOp {
  readonly pcm: Int16Array;
  pos: number;
  readonly onDone: () => void;
}
