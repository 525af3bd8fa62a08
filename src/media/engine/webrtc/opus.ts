/**
 * Opus at the engine's rate: libopus encodes and decodes 8 kHz PCM directly (RFC 7587 §4.1 keeps
 * the RTP clock at 48 kHz whatever the audio bandwidth), so no resampler sits between the engine's
 * 20 ms frames and the wire. libopus comes from `opusscript` (compiled to WebAssembly); we drive its
 * native module ourselves because the package's wrapper sizes its heap views in bytes but fills
 * them one 16-bit slot per byte, so it writes past its allocations and fails ("offset is out of
 * bounds") once a few dozen legs have codecs. The native side's layout is kept: PCM crosses as one
 * byte per 16-bit slot (low byte first), addressed by byte pointer. Heap views are taken per call:
 * the heap may grow.
 */
import { createRequire } from 'node:module';
import { MEDIA } from '../constants.js';

interface Handler {
  _encode(pcmPtr: number, pcmBytes: number, outPtr: number, frameSize: number): number;
  _decode(opusPtr: number, opusBytes: number, pcmPtr: number): number;
  _encoder_ctl(ctl: number, arg: number): number;
}
interface Native {
  HEAPU8: Uint8Array;
  HEAPU16: Uint16Array;
  _malloc(bytes: number): number;
  _free(ptr: number): void;
  OpusScriptHandler: {
    new (rate: number, channels: number, application: number): Handler;
    destroy_handler(h: Handler): void;
  };
}

let native: Native | null = null;
function lib(): Native {
  native ??= (createRequire(import.meta.url)('opusscript/build/opusscript_native_wasm.js') as () => Native)();
  return native;
}

/** libopus constants (opus_defines.h). */
const OPUS_APPLICATION_VOIP = 2048;
const OPUS_SET_BITRATE_REQUEST = 4002;
const OPUS_SET_COMPLEXITY_REQUEST = 4010;
/** The longest Opus packet is 120 ms: samples it decodes to, per kHz of the rate. */
const MAX_SAMPLES_PER_KHZ = 120;
/** Largest Opus packet (RFC 6716 §3.4: 1275 bytes per frame, up to 3 frames) with room to spare. */
const MAX_PACKET = 4000;
/** PCM buffer bytes per sample: 2 bytes, one 16-bit slot per byte, and the native encoder reads twice that. */
const PCM_BYTES_PER_SAMPLE = 8;

/** One libopus encoder or decoder with its input and output buffers in the WebAssembly heap. */
class Side {
  readonly handler: Handler;
  readonly inPtr: number;
  readonly outPtr: number;
  constructor(rate: number, inBytes: number, outBytes: number) {
    const n = lib();
    this.handler = new n.OpusScriptHandler(rate, 1, OPUS_APPLICATION_VOIP);
    this.inPtr = n._malloc(inBytes);
    this.outPtr = n._malloc(outBytes);
  }
  close(): void {
    const n = lib();
    n.OpusScriptHandler.destroy_handler(this.handler);
    n._free(this.inPtr);
    n._free(this.outPtr);
  }
}

/** Encoder and decoder state of one leg (Opus is stateful both ways). */
export class OpusCodec {
  private encoder: Side | null = null;
  private decoder: Side | null = null;
  private readonly maxSamples: number;
  private readonly out: Int16Array;

  /** `rate`: the PCM side's sample rate (the engine's 8 kHz; tests play a 48 kHz browser). */
  constructor(private readonly rate: 8000 | 48000 = MEDIA.SAMPLE_RATE) {
    this.maxSamples = (rate / 1000) * MAX_SAMPLES_PER_KHZ;
    this.out = new Int16Array(this.maxSamples);
  }

  /**
   * One 20 ms frame of 8 kHz PCM → one Opus packet (a view valid until the next call). Digital
   * silence (an idle leg: waiting for DTMF, the other side talking) is one packet encoded once per
   * process rather than per frame: any Opus packet decodes on its own.
   */
  encode(pcm: Int16Array): Uint8Array {
    if (this.rate === MEDIA.SAMPLE_RATE && isSilent(pcm)) return silencePacket();
    this.encoder ??= newEncoder(this.rate);
    return encodeWith(this.encoder, pcm, this.maxSamples);
  }

  /** One Opus packet → 8 kHz PCM (a view valid until the next call); empty when undecodable. */
  decode(payload: Uint8Array): Int16Array {
    if (payload.length === 0 || payload.length > MAX_PACKET) return this.out.subarray(0, 0);
    this.decoder ??= new Side(this.rate, MAX_PACKET, this.maxSamples * PCM_BYTES_PER_SAMPLE);
    const d = this.decoder;
    lib().HEAPU8.set(payload, d.inPtr);
    // A corrupt packet is the network's fault: a negative length, never a throw.
    const samples = d.handler._decode(d.inPtr, payload.length, d.outPtr);
    if (samples <= 0) return this.out.subarray(0, 0);
    const n = Math.min(samples, this.maxSamples);
    const heap = lib().HEAPU16;
    const base = d.outPtr >> 1;
    for (let i = 0; i < n; i++) this.out[i] = (heap[base + 2 * i]! & 0xff) | (heap[base + 2 * i + 1]! << 8);
    return this.out.subarray(0, n);
  }

  /** Frees the WebAssembly state. */
  close(): void {
    this.encoder?.close();
    this.decoder?.close();
    this.encoder = null;
    this.decoder = null;
  }
}

function encodeWith(e: Side, pcm: Int16Array, maxSamples: number): Uint8Array {
  const n = Math.min(pcm.length, maxSamples);
  const heap = lib().HEAPU16;
  const base = e.inPtr >> 1;
  for (let i = 0; i < n; i++) {
    const v = pcm[i]!;
    heap[base + 2 * i] = v & 0xff;
    heap[base + 2 * i + 1] = (v >> 8) & 0xff;
  }
  const len = e.handler._encode(e.inPtr, n * 2, e.outPtr, n);
  if (len < 0) throw new Error(`opus encode failed (${len})`);
  return lib().HEAPU8.subarray(e.outPtr, e.outPtr + len);
}

function isSilent(pcm: Int16Array): boolean {
  for (let i = 0; i < pcm.length; i++) if (pcm[i] !== 0) return false;
  return true;
}

let silence: Uint8Array | null = null;
function silencePacket(): Uint8Array {
  if (!silence) {
    const enc = newEncoder(MEDIA.SAMPLE_RATE);
    silence = Uint8Array.from(encodeWith(enc, new Int16Array(MEDIA.FRAME_SAMPLES), MEDIA.FRAME_SAMPLES));
    enc.close();
  }
  return silence;
}

function newEncoder(rate: number): Side {
  const enc = new Side(rate, (rate / 1000) * MAX_SAMPLES_PER_KHZ * PCM_BYTES_PER_SAMPLE, MAX_PACKET);
  // Narrowband speech needs little: 24 kbit/s is transparent at 8 kHz and keeps packets small.
  enc.handler._encoder_ctl(OPUS_SET_BITRATE_REQUEST, 24_000);
  // Complexity 1 instead of libopus's default 10: measured ~8× cheaper encoding in WebAssembly
  // (docs/decisions.md), and at 8 kHz, 24 kbit/s the difference is not audible on a phone call.
  enc.handler._encoder_ctl(OPUS_SET_COMPLEXITY_REQUEST, 1);
  return enc;
}
