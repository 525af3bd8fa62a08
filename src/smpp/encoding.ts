/**
 * GSM 03.38 (3GPP TS 23.038) detection/encoding and long-message splitting with a concatenation
 * UDH (3GPP TS 23.040 §9.2.3.24.1, IEI 0x00, 8-bit reference). GSM-7 is sent unpacked, one septet
 * per octet, as SMPP v3.4 data_coding 0 expects.
 */

/** Basic character set, index = septet value. */
const GSM_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\u001bÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' +
  '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
/** Extension table reached through ESC (0x1B). */
const GSM_EXT: Readonly<Record<string, number>> = {
  '\f': 0x0a,
  '^': 0x14,
  '{': 0x28,
  '}': 0x29,
  '\\': 0x2f,
  '[': 0x3c,
  '~': 0x3d,
  ']': 0x3e,
  '|': 0x40,
  '€': 0x65,
};
const BASIC_INDEX = new Map<string, number>([...GSM_BASIC].map((c, i) => [c, i]));
const EXT_REVERSE = new Map<number, string>(Object.entries(GSM_EXT).map(([c, v]) => [v, c]));

/** data_coding values we emit (SMPP v3.4 §5.2.19). */
export const DataCoding = { GSM7: 0, IA5: 1, LATIN1: 3, UCS2: 8 } as const;
export type DataCodingValue = (typeof DataCoding)[keyof typeof DataCoding];

/** True when every character is in the GSM 03.38 basic or extension table. */
export function isGsm7(text: string): boolean {
  for (const ch of text) {
    if (ch === '\u001b') return false;
    if (!BASIC_INDEX.has(ch) && GSM_EXT[ch] === undefined) return false;
  }
  return true;
}

/** Septets per character: 2 for extension characters. */
function septetsOf(ch: string): number {
  return GSM_EXT[ch] !== undefined ? 2 : 1;
}

/** Encode GSM-7 text as unpacked septets (caller has checked isGsm7). */
export function encodeGsm7(text: string): Buffer {
  const out: number[] = [];
  for (const ch of text) {
    const ext = GSM_EXT[ch];
    if (ext !== undefined) out.push(0x1b, ext);
    else out.push(BASIC_INDEX.get(ch) ?? 0x3f);
  }
  return Buffer.from(out);
}

/** Decode unpacked septets. */
export function decodeGsm7(buf: Buffer): string {
  let s = '';
  for (let i = 0; i < buf.length; i++) {
    const b = (buf[i] ?? 0) & 0x7f;
    if (b === 0x1b && i + 1 < buf.length) {
      i++;
      s += EXT_REVERSE.get((buf[i] ?? 0) & 0x7f) ?? ' ';
    } else s += GSM_BASIC[b] ?? '?';
  }
  return s;
}

export function encodeUcs2(text: string): Buffer {
  const b = Buffer.from(text, 'utf16le');
  return b.swap16();
}

export function decodeUcs2(buf: Buffer): string {
  const even = buf.length - (buf.length % 2);
  return Buffer.from(buf.subarray(0, even)).swap16().toString('utf16le');
}

/** Per-part capacities (3GPP TS 23.040): single vs concatenated (6-octet UDH). */
export const SegmentLimits = {
  GSM7_SINGLE: 160,
  GSM7_PART: 153,
  UCS2_SINGLE: 70,
  UCS2_PART: 67,
  OCTET_SINGLE: 140,
  OCTET_PART: 134,
} as const;

/** One submit_sm payload: octets ready for short_message (UDH included when concatenated). */
export interface Segment {
  readonly shortMessage: Buffer;
  readonly udh: boolean;
}

export interface EncodedMessage {
  readonly dataCoding: DataCodingValue;
  readonly segments: readonly Segment[];
}

function concatUdh(ref: number, total: number, seq: number): Buffer {
  return Buffer.from([0x05, 0x00, 0x03, ref & 0xff, total, seq]);
}

/** Split `text` into chunks, never cutting an escape pair or a surrogate pair. */
function chunk(text: string, cap: number, weight: (ch: string) => number): string[] {
  const parts: string[] = [];
  let cur = '';
  let used = 0;
  for (const ch of text) {
    const w = weight(ch);
    if (used + w > cap) {
      parts.push(cur);
      cur = '';
      used = 0;
    }
    cur += ch;
    used += w;
  }
  if (cur !== '' || parts.length === 0) parts.push(cur);
  return parts;
}

/**
 * Encode and split a message. `choice` 'auto' picks GSM-7 when possible, else UCS-2; an explicit
 * data_coding is honoured (1 IA5 and 3 Latin-1 are sent as one octet per character).
 * `ref` is the concatenation reference (0-255) shared by the parts.
 */
export function encodeMessage(text: string, choice: 'auto' | number, ref: number): EncodedMessage {
  const dc: DataCodingValue =
    choice === 'auto'
      ? isGsm7(text)
        ? DataCoding.GSM7
        : DataCoding.UCS2
      : choice === DataCoding.GSM7 && !isGsm7(text)
        ? DataCoding.UCS2
        : (choice as DataCodingValue);
  let single: number;
  let part: number;
  let weight: (ch: string) => number;
  let enc: (s: string) => Buffer;
  if (dc === DataCoding.GSM7) {
    single = SegmentLimits.GSM7_SINGLE;
    part = SegmentLimits.GSM7_PART;
    weight = septetsOf;
    enc = encodeGsm7;
  } else if (dc === DataCoding.UCS2) {
    single = SegmentLimits.UCS2_SINGLE;
    part = SegmentLimits.UCS2_PART;
    // UTF-16 code units: a character outside the BMP takes two.
    weight = (ch) => ch.length;
    enc = encodeUcs2;
  } else {
    single = SegmentLimits.OCTET_SINGLE;
    part = SegmentLimits.OCTET_PART;
    weight = () => 1;
    enc = (s) => Buffer.from(s, 'latin1');
  }
  let total = 0;
  for (const ch of text) total += weight(ch);
  if (total <= single) return { dataCoding: dc, segments: [{ shortMessage: enc(text), udh: false }] };
  const chunks = chunk(text, part, weight);
  if (chunks.length > 255) throw new RangeError('message needs more than 255 segments');
  return {
    dataCoding: dc,
    segments: chunks.map((c, i) => ({
      shortMessage: Buffer.concat([concatUdh(ref, chunks.length, i + 1), enc(c)]),
      udh: true,
    })),
  };
}

/** Decode payload octets by data_coding (low nibble per SMPP v3.4 §5.2.19). */
export function decodePayload(buf: Buffer, dataCoding: number): string {
  const dc = dataCoding & 0x0f;
  if (dc === DataCoding.UCS2) return decodeUcs2(buf);
  if (dc === DataCoding.GSM7) return decodeGsm7(buf);
  return buf.toString('latin1');
}

/** Concatenation info from a UDH (IEI 0x00 8-bit ref or 0x08 16-bit ref). */
export interface ConcatInfo {
  readonly ref: number;
  readonly total: number;
  readonly seq: number;
}

/** Parse a concatenation IE out of a list of UDH information elements (each incl. IEI+len). */
export function concatFromUdh(ies: readonly Buffer[]): ConcatInfo | null {
  for (const ie of ies) {
    if (ie[0] === 0x00 && ie[1] === 3 && ie.length >= 5) {
      return { ref: ie[2] ?? 0, total: ie[3] ?? 0, seq: ie[4] ?? 0 };
    }
    if (ie[0] === 0x08 && ie[1] === 4 && ie.length >= 6) {
      return { ref: ((ie[2] ?? 0) << 8) | (ie[3] ?? 0), total: ie[4] ?? 0, seq: ie[5] ?? 0 };
    }
  }
  return null;
}

/** Split a raw short_message with UDHI set into its IEs and the payload. */
export function splitUdh(buf: Buffer): { ies: Buffer[]; payload: Buffer } {
  const udhl = buf[0] ?? 0;
  const ies: Buffer[] = [];
  let i = 1;
  while (i + 1 < udhl + 1 && i + 1 < buf.length) {
    const len = buf[i + 1] ?? 0;
    ies.push(buf.subarray(i, i + 2 + len));
    i += 2 + len;
  }
  return { ies, payload: buf.subarray(Math.min(buf.length, udhl + 1)) };
}
