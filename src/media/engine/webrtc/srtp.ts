/**
 * SRTP for RTP packets (RFC 3711 AES_CM_128_HMAC_SHA1_80, RFC 7714 AEAD_AES_128_GCM), keyed by
 * the same DTLS-SRTP master keys werift negotiated. werift builds a cipher object and a header
 * object per packet; here each direction keeps one AES-ECB cipher that turns counter blocks into
 * keystream, several packets' worth per call, and GCM's GHASH runs in JavaScript (`ghash.ts`).
 * RTCP stays with werift (a few packets a second).
 *
 * Like werift, there is no replay list: a replayed packet is authentic and the endpoint's reorder
 * buffer drops a duplicate sequence number.
 */
import {
  type Cipher,
  createCipheriv,
  createHmac,
  createSecretKey,
  type KeyObject,
  timingSafeEqual,
} from 'node:crypto';
import { rtpHeaderLength } from '../rtp.js';
import { Ghash } from './ghash.js';

/** DTLS-SRTP protection profile numbers (RFC 5764 §4.1.2, RFC 7714 §14.2). */
export const SRTP_AES128_CM_HMAC_SHA1_80 = 0x0001;
export const SRTP_AEAD_AES_128_GCM = 0x0007;

/** The master keys and profile DTLS exported (werift's `SrtpSession.config` has this shape). */
export interface SrtpConfig {
  readonly keys: {
    readonly localMasterKey: Uint8Array;
    readonly localMasterSalt: Uint8Array;
    readonly remoteMasterKey: Uint8Array;
    readonly remoteMasterSalt: Uint8Array;
  };
  readonly profile: number;
}

const HMAC_TAG = 10;
const GCM_TAG = 16;
/** A sequence-number jump beyond this is a wrap (RFC 3711 §3.3.1). */
const HALF = 0x8000;
/** Packets whose keystream one AES call makes (see `Direction.keystream`). */
const AHEAD = 8;
const SPARE_BLOCKS = 2;
const COUNTER_BLOCKS = 256;

/** AES-128 in ECB mode, no padding: counter blocks in, keystream out. */
function ecb(key: Uint8Array): Cipher {
  const c = createCipheriv('aes-128-ecb', key, null);
  c.setAutoPadding(false);
  return c;
}

/**
 * RFC 3711 §4.3.1 key derivation (key derivation rate 0): AES-CM with the master key over
 * (label · 2⁴⁸ ⊕ master salt) · 2¹⁶, `blocks` blocks. A 12-byte GCM master salt is padded to
 * 14 bytes with zeros, as werift does.
 */
function derive(masterKey: Uint8Array, masterSalt: Uint8Array, label: number, bytes: number): Buffer {
  const blocks = Math.ceil(bytes / 16);
  const input = Buffer.alloc(blocks * 16);
  for (let b = 0; b < blocks; b++) {
    input.set(masterSalt.subarray(0, 14), b * 16);
    input[b * 16 + 7]! ^= label;
    input.writeUInt16BE(b, b * 16 + 14);
  }
  return ecb(masterKey).update(input).subarray(0, bytes);
}

/** Per-SSRC rollover state (RFC 3711 §3.3.1: ROC and the highest sequence number s_l). */
interface Roll {
  roc: number;
  seq: number;
}

/** One direction's session keys. */
class Direction {
  readonly aes: Cipher;
  readonly salt: Buffer;
  /** AES-CM only; a key object, made once (an HMAC keyed with bytes prepares the key per packet). */
  readonly authKey: KeyObject | null;
  /** GCM only. */
  readonly ghash: Ghash | null;
  private readonly counters = Buffer.alloc(16 * COUNTER_BLOCKS);
  readonly rolls = new Map<number, Roll>();
  /** The ROC as the HMAC's last 4 bytes (RFC 3711 §4.2), rewritten per packet. */
  private readonly rocBytes = Buffer.alloc(4);
  /** Keystream made ahead: `aheadCount` packets from `aheadSeq`, `aheadPer` blocks each. */
  private ahead: Buffer | null = null;
  private aheadSsrc = 0;
  private aheadRoc = 0;
  private aheadSeq = 0;
  private aheadCount = 0;
  private aheadPer = 0;

  constructor(masterKey: Uint8Array, masterSalt: Uint8Array, gcm: boolean) {
    this.aes = ecb(derive(masterKey, masterSalt, 0, 16));
    this.salt = derive(masterKey, masterSalt, 2, 14);
    this.authKey = gcm ? null : createSecretKey(derive(masterKey, masterSalt, 1, 20));
    this.ghash = gcm ? new Ghash(this.aes.update(Buffer.alloc(16))) : null;
  }

  /**
   * Keystream for `bytes` bytes of packet (ssrc, index). AES-CM: blocks IV+0, IV+1, …
   * (RFC 3711 §4.1.1). GCM: E(J0) first (the tag mask), then inc32(J0), … (RFC 7714 §8.1).
   * Packets come in sequence, so one AES call makes the keystream of the next AHEAD packets
   * (a few blocks spare each, as Opus packet sizes vary); the call, not the AES, is the cost.
   */
  keystream(ssrc: number, roc: number, seq: number, bytes: number): Buffer {
    const blocks = Math.ceil(bytes / 16) + (this.ghash ? 1 : 0);
    const i = seq - this.aheadSeq;
    if (
      this.ahead &&
      ssrc === this.aheadSsrc &&
      roc === this.aheadRoc &&
      i >= 0 &&
      i < this.aheadCount &&
      blocks <= this.aheadPer
    )
      return this.ahead.subarray(i * this.aheadPer * 16);
    const per = blocks + SPARE_BLOCKS;
    // Not across a sequence wrap (the ROC changes there), and within the counter buffer.
    const count = Math.max(1, Math.min(AHEAD, 0x10000 - seq, Math.floor(COUNTER_BLOCKS / per)));
    const n = count * per;
    const c = n * 16 <= this.counters.length ? this.counters : Buffer.alloc(n * 16);
    const s = this.salt;
    for (let k = 0; k < count; k++) {
      const q = seq + k;
      // GCM: IV = (0¹⁶ ‖ SSRC ‖ ROC ‖ SEQ) ⊕ salt, then a 32-bit counter from 1.
      // AES-CM: IV = salt·2¹⁶ ⊕ SSRC·2⁶⁴ ⊕ (ROC ‖ SEQ)·2¹⁶, then a 16-bit counter from 0.
      for (let b = 0; b < per; b++) {
        const o = (k * per + b) * 16;
        if (this.ghash) {
          c[o] = s[0]!;
          c[o + 1] = s[1]!;
          c.writeUInt32BE((ssrc ^ s.readUInt32BE(2)) >>> 0, o + 2);
          c.writeUInt32BE((roc ^ s.readUInt32BE(6)) >>> 0, o + 6);
          c.writeUInt16BE(q ^ s.readUInt16BE(10), o + 10);
          c.writeUInt32BE(b + 1, o + 12);
        } else {
          c.writeUInt32BE(s.readUInt32BE(0), o);
          c.writeUInt32BE((ssrc ^ s.readUInt32BE(4)) >>> 0, o + 4);
          c.writeUInt32BE((roc ^ s.readUInt32BE(8)) >>> 0, o + 8);
          c.writeUInt16BE(q ^ s.readUInt16BE(12), o + 12);
          c.writeUInt16BE(b, o + 14);
        }
      }
    }
    this.ahead = this.aes.update(c.subarray(0, n * 16));
    this.aheadSsrc = ssrc;
    this.aheadRoc = roc;
    this.aheadSeq = seq;
    this.aheadCount = count;
    this.aheadPer = per;
    return this.ahead;
  }

  /** GCM tag over (AAD = header, C) masked with E(J0) from `ks`. */
  gcmTag(p: Uint8Array, headerLen: number, end: number, ks: Buffer, out: Uint8Array): void {
    const g = this.ghash!;
    g.reset();
    g.update(p, 0, headerLen);
    g.update(p, headerLen, end);
    g.finish(headerLen, end - headerLen, out);
    for (let i = 0; i < GCM_TAG; i++) out[i] = out[i]! ^ ks[i]!;
  }

  hmacTag(p: Uint8Array, end: number, roc: number): Buffer {
    this.rocBytes.writeUInt32BE(roc >>> 0);
    return createHmac('sha1', this.authKey!).update(p.subarray(0, end)).update(this.rocBytes).digest();
  }
}

export class SrtpCrypto {
  private readonly out: Direction;
  private readonly in: Direction;
  private readonly gcm: boolean;
  private readonly tag = Buffer.alloc(GCM_TAG);

  private constructor(config: SrtpConfig) {
    this.gcm = config.profile === SRTP_AEAD_AES_128_GCM;
    const k = config.keys;
    this.out = new Direction(k.localMasterKey, k.localMasterSalt, this.gcm);
    this.in = new Direction(k.remoteMasterKey, k.remoteMasterSalt, this.gcm);
  }

  /** Null for a profile this module does not implement (the caller keeps werift's path). */
  static create(config: SrtpConfig): SrtpCrypto | null {
    if (config.profile !== SRTP_AES128_CM_HMAC_SHA1_80 && config.profile !== SRTP_AEAD_AES_128_GCM)
      return null;
    return new SrtpCrypto(config);
  }

  /**
   * Encrypts and authenticates one RTP packet into a new buffer, sent as `ssrc` (the packet's
   * own unless given); null when it is not RTP.
   */
  protect(rtp: Uint8Array, ssrc = readU32(rtp, 8)): Buffer | null {
    const hl = rtpHeaderLength(rtp, rtp.length);
    if (hl < 0) return null;
    const d = this.out;
    const seq = (rtp[2]! << 8) | rtp[3]!;
    let roll = d.rolls.get(ssrc);
    if (!roll) {
      roll = { roc: 0, seq };
      d.rolls.set(ssrc, roll);
    } else if (seq < roll.seq && roll.seq - seq > HALF) {
      roll.roc = (roll.roc + 1) >>> 0;
      roll.seq = seq;
    } else if (seq > roll.seq && seq - roll.seq < HALF) roll.seq = seq;
    // A packet sent late (its sequence number behind s_l across a wrap) keeps the previous ROC.
    const roc = seq > roll.seq && seq - roll.seq > HALF ? (roll.roc - 1) >>> 0 : roll.roc;
    const n = rtp.length - hl;
    const out = Buffer.allocUnsafe(rtp.length + (this.gcm ? GCM_TAG : HMAC_TAG));
    out.set(rtp.subarray(0, hl));
    out.writeUInt32BE(ssrc >>> 0, 8);
    const ks = d.keystream(ssrc, roc, seq, n);
    const k0 = this.gcm ? 16 : 0;
    for (let i = 0; i < n; i++) out[hl + i] = rtp[hl + i]! ^ ks[k0 + i]!;
    if (this.gcm) d.gcmTag(out, hl, rtp.length, ks, out.subarray(rtp.length));
    else d.hmacTag(out, rtp.length, roc).copy(out, rtp.length, 0, HMAC_TAG);
    return out;
  }

  /**
   * Authenticates and decrypts one SRTP packet in place; the RTP packet is a view of `srtp`.
   * Null when it does not authenticate (or is not RTP): the caller drops it.
   */
  unprotect(srtp: Buffer): Buffer | null {
    const tagLen = this.gcm ? GCM_TAG : HMAC_TAG;
    const end = srtp.length - tagLen;
    const hl = rtpHeaderLength(srtp, end);
    if (hl < 0) return null;
    const d = this.in;
    const ssrc = readU32(srtp, 8);
    const seq = (srtp[2]! << 8) | srtp[3]!;
    const roll = d.rolls.get(ssrc);
    // The index estimate v of RFC 3711 §3.3.1 (ROC − 1, ROC or ROC + 1).
    let roc = roll?.roc ?? 0;
    if (roll) {
      if (roll.seq < HALF) {
        if (seq - roll.seq > HALF) roc = (roc - 1) >>> 0;
      } else if (roll.seq - HALF > seq) roc = (roc + 1) >>> 0;
    }
    const ks = d.keystream(ssrc, roc, seq, end - hl);
    if (this.gcm) {
      d.gcmTag(srtp, hl, end, ks, this.tag);
      if (!timingSafeEqual(this.tag, srtp.subarray(end))) return null;
    } else {
      const tag = d.hmacTag(srtp, end, roc);
      if (!timingSafeEqual(tag.subarray(0, HMAC_TAG), srtp.subarray(end))) return null;
    }
    const k0 = this.gcm ? 16 : 0;
    for (let i = hl; i < end; i++) srtp[i] = srtp[i]! ^ ks[k0 + i - hl]!;
    // Only an authentic packet moves the state.
    if (!roll) d.rolls.set(ssrc, { roc, seq });
    else if (roc !== roll.roc) {
      if (roc === (roll.roc + 1) >>> 0) {
        roll.roc = roc;
        roll.seq = seq;
      }
    } else if (seq > roll.seq) roll.seq = seq;
    return srtp.subarray(0, end);
  }
}

function readU32(b: Uint8Array, off: number): number {
  return ((b[off]! << 24) | (b[off + 1]! << 16) | (b[off + 2]! << 8) | b[off + 3]!) >>> 0;
}
