/**
 * A conference room: once per tick it sums the input of its unmuted members (Int32, no clipping
 * until each member's output), and each member hears that sum minus its own contribution, so never
 * itself. A member alone hears its wait music. Join/leave beeps are mixed into the sum.
 */
import { MEDIA } from './constants.js';
import type { Endpoint } from './endpoint.js';
import { clamp16 } from './pcm.js';
import { playFrame } from './running-ops.js';

/** One named mixer (`AC…:name`), created by its first join and dropped after its last leave. */
export class Room {
  readonly members = new Set<Endpoint>();
  private readonly sum = new Int32Array(MEDIA.FRAME_SAMPLES);
  /** Members whose input is part of this tick's sum. */
  private readonly contributed = new Set<Endpoint>();
  private beeping: { pcm: Int16Array; pos: number } | null = null;

  constructor(readonly name: string) {}

  add(ep: Endpoint): void {
    this.members.add(ep);
  }

  remove(ep: Endpoint): void {
    this.members.delete(ep);
    this.contributed.delete(ep);
  }

  /** Mixes `pcm` into the room's next frames (join/leave beep). */
  beep(pcm: Int16Array): void {
    this.beeping = { pcm, pos: 0 };
  }

  /** Step 2 of the tick: the sum of this tick's unmuted inputs (plus a beep). */
  mixTick(): void {
    const sum = this.sum;
    sum.fill(0);
    this.contributed.clear();
    for (const m of this.members) {
      if (m.muted || !m.hasInput) continue;
      this.contributed.add(m);
      const f = m.inFrame;
      for (let i = 0; i < sum.length; i++) sum[i] = sum[i]! + f[i]!;
    }
    const b = this.beeping;
    if (b) {
      const n = Math.min(sum.length, b.pcm.length - b.pos);
      for (let i = 0; i < n; i++) sum[i] = sum[i]! + b.pcm[b.pos + i]!;
      b.pos += n;
      if (b.pos >= b.pcm.length) this.beeping = null;
    }
  }

  /** What `ep` hears this tick: everyone else (not itself), or its wait music while alone. */
  hear(ep: Endpoint, out: Int16Array): Int16Array | null {
    if (this.members.size === 1 && ep.waitMusic?.pcm) return playFrame(ep.waitMusic, out) ? out : null;
    const mine = this.contributed.has(ep) ? ep.inFrame : null;
    const sum = this.sum;
    for (let i = 0; i < out.length; i++) out[i] = clamp16(mine ? sum[i]! - mine[i]! : sum[i]!);
    return out;
  }
}
