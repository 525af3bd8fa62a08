/**
 * RTP fixed header (RFC 3550 §5.1): parse with full validation, and build. Pure functions: the
 * engine never trusts the network, so anything malformed yields `null` and is counted by the caller.
 */

/** A parsed RTP packet; `payload` is a view into the datagram. */
export interface RtpPacket {
  readonly marker: boolean;
  readonly payloadType: number;
  readonly sequence: number;
  readonly timestamp: number;
  readonly ssrc: number;
  readonly payload: Uint8Array;
}

/** RTCP packet types 200–204 share the port under rtcp-mux (RFC 5761 §4); they are not RTP. */
export function isRtcp(buf: Uint8Array): boolean {
  return buf.length >= 2 && buf[1]! >= 200 && buf[1]! <= 204 && buf[0]! >> 6 === 2;
}

/**
 * Bytes of the RTP header at the start of `p` (fixed part, CSRC list, extension) within its first
 * `end` bytes; -1 when they do not hold it.
 */
export function rtpHeaderLength(p: Uint8Array, end: number): number {
  if (end < 12) return -1;
  let n = 12 + (p[0]! & 0x0f) * 4;
  if (p[0]! & 0x10) {
    if (end < n + 4) return -1;
    n += 4 + ((p[n + 2]! << 8) | p[n + 3]!) * 4;
  }
  return n <= end ? n : -1;
}

/** Parses an RTP datagram; returns `null` for anything that is not a well-formed RTP v2 packet. */
export function parseRtp(buf: Uint8Array): RtpPacket | null {
  if (buf.length < 12) return null;
  const b0 = buf[0]!;
  if (b0 >> 6 !== 2) return null;
  const padding = (b0 & 0x20) !== 0;
  const offset = rtpHeaderLength(buf, buf.length);
  if (offset < 0) return null;
  let end = buf.length;
  if (padding) {
    const pad = buf[buf.length - 1]!;
    if (pad === 0 || end - pad < offset) return null;
    end -= pad;
  }
  const b1 = buf[1]!;
  return {
    marker: (b1 & 0x80) !== 0,
    payloadType: b1 & 0x7f,
    sequence: (buf[2]! << 8) | buf[3]!,
    timestamp: ((buf[4]! << 24) | (buf[5]! << 16) | (buf[6]! << 8) | buf[7]!) >>> 0,
    ssrc: ((buf[8]! << 24) | (buf[9]! << 16) | (buf[10]! << 8) | buf[11]!) >>> 0,
    payload: buf.subarray(offset, end),
  };
}

/** Builds an RTP v2 packet with no CSRC, extension or padding. */
export function buildRtp(
  payloadType: number,
  sequence: number,
  timestamp: number,
  ssrc: number,
  payload: Uint8Array,
  marker = false,
): Buffer {
  const out = Buffer.allocUnsafe(12 + payload.length);
  out[0] = 0x80;
  out[1] = (marker ? 0x80 : 0) | (payloadType & 0x7f);
  out.writeUInt16BE(sequence & 0xffff, 2);
  out.writeUInt32BE(timestamp >>> 0, 4);
  out.writeUInt32BE(ssrc >>> 0, 8);
  out.set(payload, 12);
  return out;
}

/**
 * Receive-side sequence tracking for loss counting (RFC 3550 Appendix A.1, simplified): packets
 * expected minus packets received, per SSRC; a new SSRC restarts the count. Reordered packets
 * never count as loss; duplicates count as received, as in RFC 3550, so they can mask a loss.
 */
export class SequenceTracker {
  private ssrc: number | null = null;
  private highest = 0;
  private cycles = 0;
  private base = 0;
  private received = 0;
  private lostBefore = 0;

  /** Records one packet. */
  push(ssrc: number, seq: number): void {
    if (this.ssrc !== ssrc) {
      this.lostBefore = this.lost;
      this.ssrc = ssrc;
      this.highest = seq;
      this.base = seq;
      this.cycles = 0;
      this.received = 1;
      return;
    }
    this.received++;
    const delta = (seq - this.highest) & 0xffff;
    if (delta !== 0 && delta < 0x8000) {
      if (seq < this.highest) this.cycles += 0x10000;
      this.highest = seq;
    }
  }

  /** Packets lost so far across every SSRC seen (never negative). */
  get lost(): number {
    if (this.ssrc === null) return this.lostBefore;
    const expected = this.cycles + this.highest - this.base + 1;
    return this.lostBefore + Math.max(0, expected - this.received);
  }
}
