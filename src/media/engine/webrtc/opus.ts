/**
 * Opus at the engine's rate: libopus encodes and decodes 8 kHz PCM directly (RFC 7587 §4.1 keeps
 * the RTP clock at 48 kHz whatever the audio bandwidth), so no resampler sits between the engine's
 * 20 ms frames and the wire. `opusscript` is libopus compiled to WebAssembly.
 */
import OpusScript from 'opusscript';
import { MEDIA } from '../constants.js';

/** libopus `OPUS_SET_COMPLEXITY_REQUEST` (opus_defines.h). */
const OPUS_SET_COMPLEXITY_REQUEST = 4010;

/** Encoder and decoder state of one leg (Opus is stateful both ways). */
export class OpusCodec {
  private encoder: OpusScript | null = null;
  private decoder: OpusScript | null = null;
  private readonly out = new Int16Array(MEDIA.SAMPLE_RATE / 10);

  /**
   * One 20 ms frame of 8 kHz PCM → one Opus packet. Digital silence (an idle leg: waiting for
   * DTMF, the other side talking) is one packet encoded once per process rather than per frame:
   * any Opus packet decodes on its own, and silence needs no encoder history.
   */
  encode(pcm: Int16Array): Uint8Array {
    if (isSilent(pcm)) return silencePacket();
    this.encoder ??= newEncoder();
    return this.encoder.encode(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength), pcm.length);
  }

  /** One Opus packet → 8 kHz PCM (a view valid until the next call); empty when undecodable. */
  decode(payload: Uint8Array): Int16Array {
    this.decoder ??= new OpusScript(MEDIA.SAMPLE_RATE, 1, OpusScript.Application.VOIP);
    let pcm: Buffer;
    try {
      pcm = this.decoder.decode(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength));
    } catch {
      // A corrupt packet is the network's fault, never fatal.
      return this.out.subarray(0, 0);
    }
    const n = Math.min(this.out.length, pcm.length >> 1);
    for (let i = 0; i < n; i++) this.out[i] = pcm.readInt16LE(i * 2);
    return this.out.subarray(0, n);
  }

  /** Frees the WebAssembly state. */
  close(): void {
    this.encoder?.delete();
    this.decoder?.delete();
    this.encoder = null;
    this.decoder = null;
  }
}

function isSilent(pcm: Int16Array): boolean {
  for (let i = 0; i < pcm.length; i++) if (pcm[i] !== 0) return false;
  return true;
}

let silence: Uint8Array | null = null;
function silencePacket(): Uint8Array {
  if (!silence) {
    const enc = newEncoder();
    const zero = new Int16Array(MEDIA.FRAME_SAMPLES);
    silence = Uint8Array.from(enc.encode(Buffer.from(zero.buffer), zero.length));
    enc.delete();
  }
  return silence;
}

function newEncoder(): OpusScript {
  const enc = new OpusScript(MEDIA.SAMPLE_RATE, 1, OpusScript.Application.VOIP);
  // Narrowband speech needs little: 24 kbit/s is transparent at 8 kHz and keeps packets small.
  enc.setBitrate(24_000);
  // Complexity 1 instead of libopus's default 10: measured ~8× cheaper encoding in WebAssembly
  // (docs/decisions.md), and at 8 kHz, 24 kbit/s the difference is not audible on a phone call.
  enc.encoderCTL(OPUS_SET_COMPLEXITY_REQUEST, 1);
  return enc;
}
