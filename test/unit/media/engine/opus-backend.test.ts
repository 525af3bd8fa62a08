import { describe, expect, it } from 'vitest';
import { tone } from '../../../../src/media/engine/pcm.js';
import { chooseOpusBackend, OpusCodec, opusBackend } from '../../../../src/media/engine/webrtc/opus.js';
import type { OpusBackend } from '../../../../src/media/engine/webrtc/opus-backend.js';
import { loadNativeOpus } from '../../../../src/media/engine/webrtc/opus-native.js';
import { wasmOpus } from '../../../../src/media/engine/webrtc/opus-wasm.js';
import { rmsOf, tonePower } from '../../../integration/media/helpers.js';

/** 1 s of a 440 Hz tone through `from`'s encoder and `to`'s decoder, 20 ms at a time. */
function roundTrip(from: OpusBackend, to: OpusBackend): Int16Array {
  const enc = new OpusCodec(8000, from);
  const dec = new OpusCodec(8000, to);
  const pcm = tone(440, 1000, 6000);
  const heard = new Int16Array(pcm.length);
  try {
    for (let f = 0; f * 160 < pcm.length; f++) {
      const packet = Uint8Array.from(enc.encode(pcm.subarray(f * 160, f * 160 + 160)));
      const decoded = dec.decode(packet);
      expect(decoded.length).toBe(160);
      heard.set(decoded, f * 160);
    }
  } finally {
    enc.close();
    dec.close();
  }
  return heard.subarray(1600);
}

describe('Opus backend', () => {
  it('takes the native addon on this machine (installed as an optional dependency)', () => {
    const chosen = opusBackend();
    expect(chosen.fallbackReason).toBeNull();
    expect(chosen.backend.name).toBe('native');
  });

  it('falls back to WebAssembly, with the reason, when the addon does not load', () => {
    const chosen = chooseOpusBackend(() => {
      throw new Error("Cannot find module '@discordjs/opus'");
    });
    expect(chosen.backend).toBe(wasmOpus);
    expect(chosen.fallbackReason).toContain('@discordjs/opus');
  });

  it('falls back when the addon loads but does not round-trip a frame', () => {
    const broken: OpusBackend = {
      ...loadNativeOpus(),
      decoder: () => ({ decode: () => new Int16Array(0), close: () => {} }),
    };
    const chosen = chooseOpusBackend(() => broken);
    expect(chosen.backend.name).toBe('wasm');
    expect(chosen.fallbackReason).toMatch(/decoded 0 samples/);
  });

  const native = loadNativeOpus();
  for (const [from, to] of [
    [native, native],
    [native, wasmOpus],
    [wasmOpus, native],
    [wasmOpus, wasmOpus],
  ] as const) {
    it(`${from.name} Opus decodes with ${to.name} libopus`, () => {
      const heard = roundTrip(from, to);
      expect(rmsOf(heard)).toBeGreaterThan(3000);
      expect(tonePower(heard, 440)).toBeGreaterThan(50 * tonePower(heard, 1500));
    });
  }

  it('drops a corrupt packet on either backend instead of throwing', () => {
    for (const b of [native, wasmOpus]) {
      const codec = new OpusCodec(8000, b);
      // TOC byte of a 20 ms CELT frame followed by a length that overruns the packet.
      expect(codec.decode(Uint8Array.from([0xff, 0xff, 0xff, 0xff])).length).toBe(0);
      codec.close();
    }
  });
});
