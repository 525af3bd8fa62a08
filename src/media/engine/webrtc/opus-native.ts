/**
 * libopus as a native addon (`@discordjs/opus`, an optional dependency built from its bundled
 * libopus sources by node-gyp at install when no prebuilt binary can be fetched). Loading throws
 * when the addon is absent or does not load; `opus.ts` then falls back to WebAssembly.
 * The package's types are not imported: on a machine where the optional build failed the package
 * is not installed, and the project must still type-check there.
 */
import { createRequire } from 'node:module';
import {
  OPUS_APPLICATION_VOIP,
  OPUS_SET_APPLICATION_REQUEST,
  type OpusBackend,
  type OpusDecoderSide,
  type OpusEncoderSettings,
  type OpusEncoderSide,
  type OpusRate,
} from './opus-backend.js';

/** The part of `@discordjs/opus` we use: one object holds an encoder and a decoder, each made on first use. */
interface Addon {
  OpusEncoder: new (
    rate: number,
    channels: number,
  ) => {
    encode(pcm: Buffer): Buffer;
    /** Throws on a packet libopus rejects. */
    decode(opus: Buffer): Buffer;
    applyEncoderCTL(ctl: number, value: number): void;
  };
}
type Handle = InstanceType<Addon['OpusEncoder']>;

function bytesOf(a: Uint8Array | Int16Array): Buffer {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}

class NativeEncoder implements OpusEncoderSide {
  private handle: Handle | null;
  constructor(addon: Addon, rate: OpusRate, s: OpusEncoderSettings) {
    this.handle = new addon.OpusEncoder(rate, 1);
    // The addon opens its encoder for music (OPUS_APPLICATION_AUDIO); a call is speech.
    this.handle.applyEncoderCTL(OPUS_SET_APPLICATION_REQUEST, OPUS_APPLICATION_VOIP);
    for (const [ctl, value] of s.ctls) this.handle.applyEncoderCTL(ctl, value);
  }
  encode(pcm: Int16Array): Uint8Array {
    if (!this.handle) throw new Error('opus encoder closed');
    // The addon reads the buffer as host-order 16-bit samples, as an Int16Array holds them.
    return this.handle.encode(bytesOf(pcm));
  }
  close(): void {
    // libopus state is freed with the addon object when it is collected.
    this.handle = null;
  }
}

class NativeDecoder implements OpusDecoderSide {
  private handle: Handle | null;
  private readonly empty = new Int16Array(0);
  constructor(addon: Addon, rate: OpusRate) {
    this.handle = new addon.OpusEncoder(rate, 1);
  }
  decode(payload: Uint8Array): Int16Array {
    if (!this.handle) return this.empty;
    let pcm: Buffer;
    try {
      pcm = this.handle.decode(bytesOf(payload));
    } catch {
      return this.empty;
    }
    // A fresh buffer from the addon: viewed in place when 16-bit aligned, as it is in practice.
    if (pcm.byteOffset % 2 === 0) return new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length >> 1);
    return new Int16Array(Uint8Array.from(pcm).buffer, 0, pcm.length >> 1);
  }
  close(): void {
    this.handle = null;
  }
}

/** Loads the addon; throws when it is not installed or does not load on this machine. */
export function loadNativeOpus(): OpusBackend {
  const addon = createRequire(import.meta.url)('@discordjs/opus') as Addon;
  if (typeof addon.OpusEncoder !== 'function') throw new Error('@discordjs/opus has no OpusEncoder');
  return {
    name: 'native',
    encoder: (rate, settings) => new NativeEncoder(addon, rate, settings),
    decoder: (rate) => new NativeDecoder(addon, rate),
  };
}
