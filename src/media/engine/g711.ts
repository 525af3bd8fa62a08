/**
 * G.711 µ-law and A-law (ITU-T G.711; RFC 3551 §4.5.14 PCMU/PCMA) through lookup tables built once
 * from `alawmulaw`, so the clock thread does a table read per sample and never allocates.
 */
import { createRequire } from 'node:module';
import type { Codec } from '../port.js';
import { MEDIA } from './constants.js';

interface G711Law {
  encodeSample(sample: number): number;
  decodeSample(sample: number): number;
}
/** alawmulaw ships UMD without a default export in its typings; load it through require. */
const { alaw, mulaw } = createRequire(import.meta.url)('alawmulaw') as { alaw: G711Law; mulaw: G711Law };

/** RTP static payload types (RFC 3551 Table 4). */
export const CODEC_PT: Readonly<Record<Codec, number>> = { PCMU: 0, PCMA: 8 };

/** The codec for a static payload type, or null. */
export function codecOfPt(pt: number): Codec | null {
  return pt === 0 ? 'PCMU' : pt === 8 ? 'PCMA' : null;
}

function tables(law: G711Law): { enc: Uint8Array; dec: Int16Array } {
  const dec = new Int16Array(256);
  for (let i = 0; i < 256; i++) dec[i] = law.decodeSample(i);
  const enc = new Uint8Array(65536);
  for (let i = 0; i < 65536; i++) enc[i] = law.encodeSample(i - 32768);
  return { enc, dec };
}

const TABLES: Readonly<Record<Codec, { enc: Uint8Array; dec: Int16Array }>> = {
  PCMU: tables(mulaw),
  PCMA: tables(alaw),
};

/** Encodes `pcm` into `out` (same length), or into a new array. */
export function encodeG711(codec: Codec, pcm: Int16Array, out = new Uint8Array(pcm.length)): Uint8Array {
  const enc = TABLES[codec].enc;
  for (let i = 0; i < pcm.length; i++) out[i] = enc[pcm[i]! + 32768]!;
  return out;
}

/** Decodes `bytes` into `out` (same length), or into a new array. */
export function decodeG711(codec: Codec, bytes: Uint8Array, out = new Int16Array(bytes.length)): Int16Array {
  const dec = TABLES[codec].dec;
  for (let i = 0; i < bytes.length; i++) out[i] = dec[bytes[i]!]!;
  return out;
}

/** The encoded byte for digital silence. */
export function silenceByte(codec: Codec): number {
  return TABLES[codec].enc[32768]!;
}

const SILENCE_PAYLOADS: Readonly<Record<Codec, Uint8Array>> = {
  PCMU: new Uint8Array(MEDIA.FRAME_SAMPLES).fill(silenceByte('PCMU')),
  PCMA: new Uint8Array(MEDIA.FRAME_SAMPLES).fill(silenceByte('PCMA')),
};

/**
 * One 20 ms frame of digital silence, encoded (what `encodeG711` makes of a zero frame). Shared by
 * every endpoint: read it, never write it.
 */
export function silencePayload(codec: Codec): Uint8Array {
  return SILENCE_PAYLOADS[codec];
}
