/**
 * What the engine needs of a libopus build: mono encoders and decoders at 8 kHz (the engine's
 * rate) or 48 kHz (tests and benchmarks playing a browser). Two builds implement it: the native
 * addon (`opus-native.ts`) and the WebAssembly fallback (`opus-wasm.ts`); `opus.ts` picks one.
 */

export type OpusRate = 8000 | 48000;

/** One leg's encoder; `encode` returns a view valid until the next call. */
export interface OpusEncoderSide {
  encode(pcm: Int16Array): Uint8Array;
  close(): void;
}

/**
 * One leg's decoder; `decode` returns PCM (valid until the next call), empty when libopus rejects
 * the packet: a corrupt packet is the network's fault, never a throw.
 */
export interface OpusDecoderSide {
  decode(payload: Uint8Array): Int16Array;
  close(): void;
}

/** Encoder CTLs applied once at creation, as libopus request/value pairs. */
export interface OpusEncoderSettings {
  readonly ctls: readonly (readonly [number, number])[];
}

export interface OpusBackend {
  readonly name: 'native' | 'wasm';
  encoder(rate: OpusRate, settings: OpusEncoderSettings): OpusEncoderSide;
  decoder(rate: OpusRate): OpusDecoderSide;
}

/** libopus constants (opus_defines.h). */
export const OPUS_APPLICATION_VOIP = 2048;
export const OPUS_SET_APPLICATION_REQUEST = 4000;
export const OPUS_SET_BITRATE_REQUEST = 4002;
export const OPUS_SET_COMPLEXITY_REQUEST = 4010;
/** The longest Opus packet is 120 ms: samples it decodes to, per kHz of the rate. */
export const MAX_SAMPLES_PER_KHZ = 120;
/** Largest Opus packet (RFC 6716 §3.4: 1275 bytes per frame, up to 3 frames) with room to spare. */
export const MAX_PACKET = 4000;
