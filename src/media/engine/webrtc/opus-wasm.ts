/**
 * libopus compiled to WebAssembly (`opusscript`): the fallback Opus backend, used when the native
 * addon does not load. We drive the package's WebAssembly module ourselves because its wrapper
 * sizes its heap views in bytes but fills them one 16-bit slot per byte, so it writes past its
 * allocations and fails ("offset is out of bounds") once a few dozen legs have codecs. The native
 * side's layout is kept: PCM crosses as one byte per 16-bit slot (low byte first), addressed by
 * byte pointer. Heap views are taken per call: the heap may grow.
 */
import { createRequire } from 'node:module';
import {
  MAX_PACKET,
  MAX_SAMPLES_PER_KHZ,
  OPUS_APPLICATION_VOIP,
  type OpusBackend,
  type OpusDecoderSide,
  type OpusEncoderSettings,
  type OpusEncoderSide,
  type OpusRate,
} from './opus-backend.js';

interface Handler {
  _encode(pcmPtr: number, pcmBytes: number, outPtr: number, frameSize: number): number;
  _decode(opusPtr: number, opusBytes: number, pcmPtr: number): number;
  _encoder_ctl(ctl: number, arg: number): number;
}
interface Module {
  HEAPU8: Uint8Array;
  HEAPU16: Uint16Array;
  _malloc(bytes: number): number;
  _free(ptr: number): void;
  OpusScriptHandler: {
    new (rate: number, channels: number, application: number): Handler;
    destroy_handler(h: Handler): void;
  };
}

let module: Module | null = null;
function lib(): Module {
  module ??= (createRequire(import.meta.url)('opusscript/build/opusscript_native_wasm.js') as () => Module)();
  return module;
}

/** PCM buffer bytes per sample: 2 bytes, one 16-bit slot per byte, and the native encoder reads twice that. */
const PCM_BYTES_PER_SAMPLE = 8;

/** One libopus handler with its input and output buffers in the WebAssembly heap. */
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

class WasmEncoder implements OpusEncoderSide {
  private readonly side: Side;
  private readonly maxSamples: number;
  constructor(rate: OpusRate, s: OpusEncoderSettings) {
    this.maxSamples = (rate / 1000) * MAX_SAMPLES_PER_KHZ;
    this.side = new Side(rate, this.maxSamples * PCM_BYTES_PER_SAMPLE, MAX_PACKET);
    for (const [ctl, value] of s.ctls) this.side.handler._encoder_ctl(ctl, value);
  }
  encode(pcm: Int16Array): Uint8Array {
    const e = this.side;
    const n = Math.min(pcm.length, this.maxSamples);
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
  close(): void {
    this.side.close();
  }
}

class WasmDecoder implements OpusDecoderSide {
  private readonly side: Side;
  private readonly maxSamples: number;
  private readonly out: Int16Array;
  constructor(rate: OpusRate) {
    this.maxSamples = (rate / 1000) * MAX_SAMPLES_PER_KHZ;
    this.out = new Int16Array(this.maxSamples);
    this.side = new Side(rate, MAX_PACKET, this.maxSamples * PCM_BYTES_PER_SAMPLE);
  }
  decode(payload: Uint8Array): Int16Array {
    const d = this.side;
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
  close(): void {
    this.side.close();
  }
}

export const wasmOpus: OpusBackend = {
  name: 'wasm',
  encoder: (rate, settings) => new WasmEncoder(rate, settings),
  decoder: (rate) => new WasmDecoder(rate),
};
