import { describe, expect, it } from 'vitest';
import {
  concatFromUdh,
  decodeGsm7,
  decodeUcs2,
  encodeGsm7,
  encodeMessage,
  isGsm7,
  splitUdh,
} from '../../../src/smpp/encoding.js';

describe('GSM-7 / UCS-2 encoding and splitting', () => {
  it('detects the GSM 03.38 alphabet incl. the extension table', () => {
    expect(isGsm7('Hello @£$ {}[]€')).toBe(true);
    expect(isGsm7('Привет')).toBe(false);
    expect(isGsm7('emoji 😀')).toBe(false);
  });

  it('encodes extension characters as ESC pairs and round-trips', () => {
    const b = encodeGsm7('a€{');
    expect([...b]).toEqual([0x61, 0x1b, 0x65, 0x1b, 0x28]);
    expect(decodeGsm7(encodeGsm7('Hello @£$ {}[]€ äöü'))).toBe('Hello @£$ {}[]€ äöü');
  });

  it('sends 160 GSM-7 chars in one part, 161 in two of ≤153 septets', () => {
    expect(encodeMessage('x'.repeat(160), 'auto', 1).segments).toHaveLength(1);
    const m = encodeMessage('x'.repeat(161), 'auto', 7);
    expect(m.dataCoding).toBe(0);
    expect(m.segments).toHaveLength(2);
    expect(m.segments[0]?.shortMessage.length).toBe(6 + 153);
    expect([...(m.segments[1]?.shortMessage.subarray(0, 6) ?? [])]).toEqual([5, 0, 3, 7, 2, 2]);
  });

  it('never splits an escape pair across parts', () => {
    const m = encodeMessage(`${'x'.repeat(152)}€€${'x'.repeat(10)}`, 'auto', 1);
    expect(m.segments).toHaveLength(2);
    expect(m.segments[0]?.shortMessage.length).toBe(6 + 152);
  });

  it('sends 70 UCS-2 chars in one part and 71 in two parts of 67', () => {
    expect(encodeMessage('я'.repeat(70), 'auto', 1).segments).toHaveLength(1);
    const m = encodeMessage('я'.repeat(135), 'auto', 1);
    expect(m.dataCoding).toBe(8);
    expect(m.segments).toHaveLength(3);
    expect(m.segments[0]?.shortMessage.length).toBe(6 + 134);
    const text = m.segments.map((s) => decodeUcs2(s.shortMessage.subarray(6))).join('');
    expect(text).toBe('я'.repeat(135));
  });

  it('never splits a surrogate pair', () => {
    const m = encodeMessage(`${'я'.repeat(66)}😀😀${'я'.repeat(5)}`, 'auto', 1);
    expect(decodeUcs2(m.segments[0]?.shortMessage.subarray(6) ?? Buffer.alloc(0))).toBe('я'.repeat(66));
  });

  it('honours an explicit data_coding, falling back to UCS-2 when 0 cannot carry the text', () => {
    expect(encodeMessage('abc', 3, 1).dataCoding).toBe(3);
    expect(encodeMessage('abc', 8, 1).dataCoding).toBe(8);
    expect(encodeMessage('Привет', 0, 1).dataCoding).toBe(8);
  });

  it('parses concatenation IEs (8- and 16-bit reference)', () => {
    const { ies, payload } = splitUdh(Buffer.from([5, 0, 3, 9, 3, 2, 0x41]));
    expect(concatFromUdh(ies)).toEqual({ ref: 9, total: 3, seq: 2 });
    expect([...payload]).toEqual([0x41]);
    expect(concatFromUdh([Buffer.from([8, 4, 1, 2, 4, 1])])).toEqual({ ref: 258, total: 4, seq: 1 });
    expect(concatFromUdh([Buffer.from([0x24, 1, 0])])).toBeNull();
  });
});
