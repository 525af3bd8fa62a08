/**
 * GHASH (NIST SP 800-38D §6.4), the authenticator of AES-GCM, for SRTP's AEAD_AES_128_GCM
 * (`srtp.ts`). Node offers GCM only as a cipher object bound to one IV, and building one per packet
 * costs more than the packet's whole GHASH in JavaScript; the AES half of GCM stays in OpenSSL.
 *
 * Shoup's 4-bit table method (as mbedTLS's gcm_mult): sixteen multiples of H, the 128-bit field
 * element held as four 32-bit words, most significant first. Table look-ups depend on the data
 * hashed, as in every table-driven GHASH; the key H is per SRTP session and never leaves the engine.
 */

/** x⁴-reduction constants for the four bits shifted out (mbedTLS's last4), pre-shifted to the top word. */
const LAST4 = Int32Array.from(
  [
    0x0000, 0x1c20, 0x3840, 0x2460, 0x7080, 0x6ca0, 0x48c0, 0x54e0, 0xe100, 0xfd20, 0xd940, 0xc560, 0x9180,
    0x8da0, 0xa9c0, 0xb5e0,
  ],
  (v) => v << 16,
);

export class Ghash {
  /** M[i] = i·H for each 4-bit i, four words per entry. */
  private readonly m = new Int32Array(64);
  /** The running hash. */
  private z0 = 0;
  private z1 = 0;
  private z2 = 0;
  private z3 = 0;
  /** Scratch for a partial last block and the length block. */
  private readonly pad = new Uint8Array(16);
  private readonly padView = new DataView(this.pad.buffer);

  /** `h`: the hash key, E(K, 0¹²⁸), 16 bytes. */
  constructor(h: Uint8Array) {
    const m = this.m;
    let v0 = readU32(h, 0);
    let v1 = readU32(h, 4);
    let v2 = readU32(h, 8);
    let v3 = readU32(h, 12);
    m.set([v0, v1, v2, v3], 32);
    // 4·H, 2·H, 1·H: each a multiplication by x (a right shift in GCM's bit order) of the previous.
    for (let i = 4; i > 0; i >>= 1) {
      const carry = v3 & 1;
      v3 = ((v3 >>> 1) | (v2 << 31)) >>> 0;
      v2 = ((v2 >>> 1) | (v1 << 31)) >>> 0;
      v1 = ((v1 >>> 1) | (v0 << 31)) >>> 0;
      v0 = ((v0 >>> 1) ^ (carry ? 0xe1000000 : 0)) >>> 0;
      m.set([v0, v1, v2, v3], i * 4);
    }
    for (let i = 2; i <= 8; i *= 2)
      for (let j = 1; j < i; j++)
        for (let w = 0; w < 4; w++) m[(i + j) * 4 + w] = (m[i * 4 + w]! ^ m[j * 4 + w]!) >>> 0;
  }

  reset(): void {
    this.z0 = this.z1 = this.z2 = this.z3 = 0;
  }

  /** Absorbs `data`, zero-padded to a whole number of 16-byte blocks (as GCM pads A and C). */
  update(data: Uint8Array, start = 0, end = data.length): void {
    for (let off = start; off < end; off += 16) {
      if (end - off >= 16) this.block(data, off);
      else {
        this.pad.fill(0);
        this.pad.set(data.subarray(off, end));
        this.block(this.pad, 0);
      }
    }
  }

  /** Absorbs the length block (bit lengths of A and C) and writes the hash, 16 bytes, to `out`. */
  finish(aadBytes: number, textBytes: number, out: Uint8Array): void {
    const v = this.padView;
    // Bit lengths as 64-bit big-endian integers; SRTP packets are far below 2³² bits.
    v.setUint32(0, 0);
    v.setUint32(4, aadBytes * 8);
    v.setUint32(8, 0);
    v.setUint32(12, textBytes * 8);
    this.block(this.pad, 0);
    const o = new DataView(out.buffer, out.byteOffset, 16);
    o.setUint32(0, this.z0 >>> 0);
    o.setUint32(4, this.z1 >>> 0);
    o.setUint32(8, this.z2 >>> 0);
    o.setUint32(12, this.z3 >>> 0);
  }

  /** Z ← (Z ⊕ X)·H for the block X at `off`. */
  private block(x: Uint8Array, off: number): void {
    const m = this.m;
    const y0 = readU32(x, off) ^ this.z0;
    const y1 = readU32(x, off + 4) ^ this.z1;
    const y2 = readU32(x, off + 8) ^ this.z2;
    const y3 = readU32(x, off + 12) ^ this.z3;
    let z0 = 0;
    let z1 = 0;
    let z2 = 0;
    let z3 = 0;
    // Horner's rule over the 32 nibbles of X ⊕ Z, lowest-degree coefficients last: the last
    // byte's low nibble first, i.e. each word from its least significant nibble up.
    for (let w = 3; w >= 0; w--) {
      let v = w === 3 ? y3 : w === 2 ? y2 : w === 1 ? y1 : y0;
      for (let k = 0; k < 8; k++) {
        if (w !== 3 || k !== 0) {
          const rem = z3 & 0xf;
          z3 = (z3 >>> 4) | (z2 << 28);
          z2 = (z2 >>> 4) | (z1 << 28);
          z1 = (z1 >>> 4) | (z0 << 28);
          z0 = (z0 >>> 4) ^ LAST4[rem]!;
        }
        const t = (v & 0xf) << 2;
        v >>>= 4;
        z0 ^= m[t]!;
        z1 ^= m[t + 1]!;
        z2 ^= m[t + 2]!;
        z3 ^= m[t + 3]!;
      }
    }
    this.z0 = z0;
    this.z1 = z1;
    this.z2 = z2;
    this.z3 = z3;
  }
}

/** A big-endian 32-bit word, as a signed int32 (only its bits matter here). */
function readU32(b: Uint8Array, off: number): number {
  return (b[off]! << 24) | (b[off + 1]! << 16) | (b[off + 2]! << 8) | b[off + 3]!;
}
