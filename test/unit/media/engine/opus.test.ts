import { describe, expect, it } from 'vitest';
import { tone } from '../../../../src/media/engine/pcm.js';
import { OpusCodec } from '../../../../src/media/engine/webrtc/opus.js';
import { rmsOf, tonePower } from '../../../integration/media/helpers.js';

describe('Opus at 8 kHz', () => {
  it('round-trips a tone on each of 200 legs at once (codec state per leg, buffers never overlap)', () => {
    const legs = Array.from({ length: 200 }, () => new OpusCodec());
    const pcm = tone(440, 600, 6000);
    const heard = legs.map(() => new Int16Array(pcm.length));
    try {
      for (let f = 0; f * 160 < pcm.length; f++) {
        const frame = pcm.subarray(f * 160, f * 160 + 160);
        legs.forEach((leg, i) => {
          const decoded = leg.decode(Uint8Array.from(leg.encode(frame)));
          expect(decoded.length).toBe(160);
          heard[i]!.set(decoded, f * 160);
        });
      }
    } finally {
      for (const leg of legs) leg.close();
    }
    for (const h of heard) {
      const steady = h.subarray(1600);
      expect(rmsOf(steady)).toBeGreaterThan(3000);
      expect(tonePower(steady, 440)).toBeGreaterThan(50 * tonePower(steady, 1500));
    }
  });

  it('sends digital silence as one cached packet and drops undecodable input', () => {
    const codec = new OpusCodec();
    const a = codec.encode(new Int16Array(160));
    const b = codec.encode(new Int16Array(160));
    expect(a).toBe(b);
    expect(codec.decode(new Uint8Array(0)).length).toBe(0);
    expect(codec.decode(new Uint8Array(5000)).length).toBe(0);
    codec.close();
  });
});
