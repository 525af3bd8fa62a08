/**
 * WAV in and out. Reading goes through `wavefile` (any RIFF layout, extra chunks); only 8 kHz mono
 * 16-bit PCM, µ-law or A-law is accepted here, and everything else is converted by sox in a child
 * process first, so no resampling ever runs on the clock thread. Writing is a hand-made 44-byte
 * header in front of the PCM: a long recording is never re-packed sample by sample.
 */
import { endianness } from 'node:os';
import wavefile from 'wavefile';
import { MEDIA } from './constants.js';
import { decodeG711 } from './g711.js';

/** WAVE format tags (RFC 2361 Appendix A). */
const WAVE_FORMAT = { PCM: 1, ALAW: 6, MULAW: 7 } as const;

/** Why a WAV buffer cannot be used directly. */
export type WavCheck =
  | { readonly ok: true; readonly pcm: Int16Array }
  | { readonly ok: false; readonly reason: string };

/**
 * Decodes a WAV that is already in the engine's format (8 kHz, mono, 16-bit PCM or G.711).
 * `ok: false` means: convert it with sox (or it is not a WAV at all).
 */
export function readEngineWav(bytes: Uint8Array): WavCheck {
  const wav = new wavefile.WaveFile();
  try {
    wav.fromBuffer(bytes, true);
  } catch (err) {
    return { ok: false, reason: `not a WAV: ${(err as Error).message}` };
  }
  const fmt = wav.fmt as {
    audioFormat: number;
    numChannels: number;
    sampleRate: number;
    bitsPerSample: number;
  };
  const data = (wav.data as { samples: Uint8Array }).samples;
  if (fmt.numChannels !== 1 || fmt.sampleRate !== MEDIA.SAMPLE_RATE) {
    return { ok: false, reason: `${fmt.sampleRate} Hz × ${fmt.numChannels} channels` };
  }
  if (fmt.audioFormat === WAVE_FORMAT.PCM && fmt.bitsPerSample === 16) {
    const pcm = new Int16Array(data.length >> 1);
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    for (let i = 0; i < pcm.length; i++) pcm[i] = view.getInt16(i * 2, true);
    return { ok: true, pcm };
  }
  if (fmt.audioFormat === WAVE_FORMAT.MULAW && fmt.bitsPerSample === 8)
    return { ok: true, pcm: decodeG711('PCMU', data) };
  if (fmt.audioFormat === WAVE_FORMAT.ALAW && fmt.bitsPerSample === 8)
    return { ok: true, pcm: decodeG711('PCMA', data) };
  return { ok: false, reason: `format ${fmt.audioFormat}, ${fmt.bitsPerSample} bits` };
}

/** The canonical 44-byte header of an 8 kHz mono 16-bit PCM WAV holding `dataBytes` bytes. */
export function wavHeader(dataBytes: number): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(36 + dataBytes, 4);
  h.write('WAVE', 8, 'ascii');
  h.write('fmt ', 12, 'ascii');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(WAVE_FORMAT.PCM, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(MEDIA.SAMPLE_RATE, 24);
  h.writeUInt32LE(MEDIA.SAMPLE_RATE * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(dataBytes, 40);
  return h;
}

const LITTLE_ENDIAN = endianness() === 'LE';

/** Little-endian bytes of PCM samples (WAV byte order): a plain copy on little-endian hosts. */
export function pcmToBytes(pcm: Int16Array): Buffer {
  if (LITTLE_ENDIAN) return Buffer.from(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.byteLength));
  const out = Buffer.allocUnsafe(pcm.length * 2);
  for (let i = 0; i < pcm.length; i++) out.writeInt16LE(pcm[i]!, i * 2);
  return out;
}
