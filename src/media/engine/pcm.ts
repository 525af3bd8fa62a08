/** PCM helpers for 8 kHz mono Int16 audio: FIFO, energy, tone synthesis. Pure, allocation-light. */
import { MEDIA } from './constants.js';

/**
 * Receive FIFO between the network (packets of any ptime: sipp's pcap is 30 ms) and the 20 ms clock.
 * Playout starts after `prefill` samples (absorbing jitter) and restarts the prefill after an underrun;
 * beyond `capacity` the oldest samples are dropped.
 */
export class PcmFifo {
  private readonly buf: Int16Array;
  private start = 0;
  private length = 0;
  private primed = false;
  /** Samples dropped because the FIFO was full. */
  overflowSamples = 0;
  /** Ticks that found the FIFO empty after playout had started. */
  underruns = 0;

  constructor(
    private readonly capacity: number = MEDIA.JITTER_MAX_SAMPLES,
    private readonly prefill: number = MEDIA.JITTER_PREFILL_SAMPLES,
  ) {
    this.buf = new Int16Array(capacity);
  }

  get size(): number {
    return this.length;
  }

  push(samples: Int16Array): void {
    for (let i = 0; i < samples.length; i++) {
      if (this.length === this.capacity) {
        this.start = (this.start + 1) % this.capacity;
        this.length--;
        this.overflowSamples++;
      }
      this.buf[(this.start + this.length) % this.capacity] = samples[i]!;
      this.length++;
    }
  }

  /**
   * Fills `out` with the next frame. Returns false (and leaves `out` untouched) while priming or
   * when empty; a partial frame is zero-padded.
   */
  pop(out: Int16Array): boolean {
    if (!this.primed) {
      if (this.length < this.prefill) return false;
      this.primed = true;
    }
    if (this.length === 0) {
      this.primed = false;
      this.underruns++;
      return false;
    }
    const n = Math.min(out.length, this.length);
    for (let i = 0; i < n; i++) out[i] = this.buf[(this.start + i) % this.capacity]!;
    out.fill(0, n);
    this.start = (this.start + n) % this.capacity;
    this.length -= n;
    return true;
  }

  clear(): void {
    this.start = 0;
    this.length = 0;
    this.primed = false;
  }
}

/** Root mean square of a frame. */
export function rms(frame: Int16Array): number {
  let sum = 0;
  for (let i = 0; i < frame.length; i++) sum += frame[i]! * frame[i]!;
  return frame.length === 0 ? 0 : Math.sqrt(sum / frame.length);
}

/** A sine tone at 8 kHz, `amplitude` in Int16 units. */
export function tone(frequencyHz: number, ms: number, amplitude = 8000): Int16Array {
  const n = Math.round((MEDIA.SAMPLE_RATE * ms) / 1000);
  const out = new Int16Array(n);
  const w = (2 * Math.PI * frequencyHz) / MEDIA.SAMPLE_RATE;
  for (let i = 0; i < n; i++) out[i] = Math.round(amplitude * Math.sin(w * i));
  return out;
}

/** Clamps to the Int16 range. */
export function clamp16(v: number): number {
  return v > 32767 ? 32767 : v < -32768 ? -32768 : v;
}
