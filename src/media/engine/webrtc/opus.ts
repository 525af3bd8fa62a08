/**
 * Opus at the engine's rate: libopus encodes and decodes 8 kHz PCM directly (RFC 7587 §4.1 keeps
 * the RTP clock at 48 kHz whatever the audio bandwidth), so no resampler sits between the engine's
 * 20 ms frames and the wire. libopus is the native addon when it loads (about 3× cheaper to encode
 * than WebAssembly, docs/decisions.md), else the WebAssembly build every install has; the engine
 * logs which at start.
 */
import { MEDIA } from '../constants.js';
import {
  MAX_PACKET,
  OPUS_SET_BITRATE_REQUEST,
  OPUS_SET_COMPLEXITY_REQUEST,
  type OpusBackend,
  type OpusDecoderSide,
  type OpusEncoderSettings,
  type OpusEncoderSide,
  type OpusRate,
} from './opus-backend.js';
import { loadNativeOpus } from './opus-native.js';
import { wasmOpus } from './opus-wasm.js';

export type { OpusBackend } from './opus-backend.js';

const ENCODER: OpusEncoderSettings = {
  ctls: [
    // Narrowband speech needs little: 24 kbit/s is transparent at 8 kHz and keeps packets small.
    [OPUS_SET_BITRATE_REQUEST, 24_000],
    // Complexity 0 instead of libopus's default 10: 1 measured ~8× cheaper encoding than 10
    // (docs/decisions.md), 0 another 15–20 % (SILK's simplest pitch search and quantiser search);
    // at 8 kHz, 24 kbit/s the difference is not audible on a phone call.
    [OPUS_SET_COMPLEXITY_REQUEST, 0],
  ],
};

/** The backend in use and, when it is the fallback, why the native one was not taken. */
export interface OpusChoice {
  readonly backend: OpusBackend;
  readonly fallbackReason: string | null;
}

/**
 * The native backend if it loads and round-trips a frame, else WebAssembly. A native addon that
 * loads but misbehaves (an ABI or libc mismatch) is caught here, once, not on a live call.
 */
export function chooseOpusBackend(loadNative: () => OpusBackend = loadNativeOpus): OpusChoice {
  try {
    const native = loadNative();
    probe(native);
    return { backend: native, fallbackReason: null };
  } catch (err) {
    return { backend: wasmOpus, fallbackReason: err instanceof Error ? err.message : String(err) };
  }
}

function probe(b: OpusBackend): void {
  const enc = b.encoder(MEDIA.SAMPLE_RATE, ENCODER);
  const dec = b.decoder(MEDIA.SAMPLE_RATE);
  try {
    const pcm = new Int16Array(MEDIA.FRAME_SAMPLES);
    for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(6000 * Math.sin((2 * Math.PI * 440 * i) / 8000));
    const n = dec.decode(Uint8Array.from(enc.encode(pcm))).length;
    if (n !== MEDIA.FRAME_SAMPLES) throw new Error(`${b.name} Opus decoded ${n} samples of ${pcm.length}`);
  } finally {
    enc.close();
    dec.close();
  }
}

let choice: OpusChoice | null = null;
/** The process's Opus backend, chosen on first use. */
export function opusBackend(): OpusChoice {
  choice ??= chooseOpusBackend();
  return choice;
}

/** Encoder and decoder state of one leg (Opus is stateful both ways). */
export class OpusCodec {
  private encoder: OpusEncoderSide | null = null;
  private decoder: OpusDecoderSide | null = null;
  private readonly empty = new Int16Array(0);

  /**
   * `rate`: the PCM side's sample rate (the engine's 8 kHz; tests play a 48 kHz browser).
   * `backend`: the process's choice unless a test names one.
   */
  constructor(
    private readonly rate: OpusRate = MEDIA.SAMPLE_RATE,
    private readonly backend: OpusBackend = opusBackend().backend,
  ) {}

  /**
   * One 20 ms frame of PCM → one Opus packet (a view valid until the next call). Digital silence
   * at 8 kHz (an idle leg: waiting for DTMF, the other side talking) is one packet encoded once
   * per process rather than per frame: any Opus packet decodes on its own.
   */
  encode(pcm: Int16Array): Uint8Array {
    if (this.rate === MEDIA.SAMPLE_RATE && isSilent(pcm)) return silencePacket(this.backend);
    this.encoder ??= this.backend.encoder(this.rate, ENCODER);
    return this.encoder.encode(pcm);
  }

  /** One Opus packet → PCM at `rate` (valid until the next call); empty when undecodable. */
  decode(payload: Uint8Array): Int16Array {
    if (payload.length === 0 || payload.length > MAX_PACKET) return this.empty;
    this.decoder ??= this.backend.decoder(this.rate);
    return this.decoder.decode(payload);
  }

  /** Frees the codec state. */
  close(): void {
    this.encoder?.close();
    this.decoder?.close();
    this.encoder = null;
    this.decoder = null;
  }
}

function isSilent(pcm: Int16Array): boolean {
  for (let i = 0; i < pcm.length; i++) if (pcm[i] !== 0) return false;
  return true;
}

const silence = new Map<OpusBackend, Uint8Array>();
function silencePacket(b: OpusBackend): Uint8Array {
  let packet = silence.get(b);
  if (!packet) {
    const enc = b.encoder(MEDIA.SAMPLE_RATE, ENCODER);
    packet = Uint8Array.from(enc.encode(new Int16Array(MEDIA.FRAME_SAMPLES)));
    enc.close();
    silence.set(b, packet);
  }
  return packet;
}
