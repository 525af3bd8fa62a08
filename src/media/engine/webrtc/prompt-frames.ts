/**
 * Opus frames of prompts, encoded once per process rather than once per leg. Many legs usually
 * play the same prompt (an IVR menu, hold music) and Opus encoding is the largest share of a
 * WebRTC leg's CPU, so a leg sending an unmodified, aligned frame of a prompt takes the packet
 * from here. Each prompt has its own encoder that encodes its frames lazily and in order, so the
 * cached bitstream is one encoder's continuous encoding of the prompt; a leg switching between its
 * own encoder and the cache is, to the browser's decoder, like a stream restart, which Opus
 * tolerates. Entries live as long as the prompt's PCM (a WeakMap: the prompt memo in sources.ts
 * decides that) and hold about a fifth of its bytes at 24 kbit/s.
 */
import { MEDIA } from '../constants.js';
import { type OpusBackend, OpusCodec } from './opus.js';

/** Longer prompts are encoded per leg: bounds one entry to ~2 MB of packets. */
export const MAX_PROMPT_FRAMES = 10 * 60 * 50;
/**
 * A leg never asks far beyond what is encoded (plays start at frame 0 and advance one a tick), but
 * if one did, catching up must not stall the tick: it then encodes with its own encoder instead.
 */
const MAX_CATCH_UP = 50;

/** The Opus packets of one prompt's whole frames, encoded on demand, packed in one buffer. */
export class PromptFrames {
  private codec: OpusCodec | null;
  private data = new Uint8Array(16 * 1024);
  private used = 0;
  /** End offset in `data` of each encoded frame. */
  private readonly ends: Uint32Array;
  /** Frames encoded so far (0…frames). */
  encoded = 0;

  constructor(
    private readonly pcm: Int16Array,
    backend?: OpusBackend,
  ) {
    this.ends = new Uint32Array(Math.floor(pcm.length / MEDIA.FRAME_SAMPLES));
    this.codec = new OpusCodec(MEDIA.SAMPLE_RATE, backend);
  }

  /** Frame `index`'s packet (a view to copy before the next call), or null when not served here. */
  frame(index: number): Uint8Array | null {
    if (index < 0 || index >= this.ends.length || index > this.encoded + MAX_CATCH_UP) return null;
    while (this.encoded <= index) this.encodeNext();
    return this.data.subarray(index === 0 ? 0 : this.ends[index - 1], this.ends[index]);
  }

  private encodeNext(): void {
    const f = this.encoded;
    const at = f * MEDIA.FRAME_SAMPLES;
    const packet = this.codec!.encode(this.pcm.subarray(at, at + MEDIA.FRAME_SAMPLES));
    if (this.used + packet.length > this.data.length) {
      const grown = new Uint8Array(Math.max(this.data.length * 2, this.used + packet.length));
      grown.set(this.data.subarray(0, this.used));
      this.data = grown;
    }
    this.data.set(packet, this.used);
    this.used += packet.length;
    this.ends[f] = this.used;
    this.encoded++;
    if (this.encoded === this.ends.length) {
      // Every frame is in: the encoder's state is no longer needed.
      this.codec!.close();
      this.codec = null;
      this.data = this.data.slice(0, this.used);
    }
  }
}

const prompts = new WeakMap<Int16Array, PromptFrames>();

/** The shared frames of `pcm`, or null when it is not cached (too long, or shorter than a frame). */
export function promptFrames(pcm: Int16Array): PromptFrames | null {
  let entry = prompts.get(pcm);
  if (!entry) {
    const frames = Math.floor(pcm.length / MEDIA.FRAME_SAMPLES);
    if (frames === 0 || frames > MAX_PROMPT_FRAMES) return null;
    entry = new PromptFrames(pcm);
    prompts.set(pcm, entry);
  }
  return entry;
}
