import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  badDigit,
  buildTelephoneEvent,
  DtmfDetector,
  digitSchedule,
  digitsToPcm,
  digitToEvent,
  eventToDigit,
  InbandDtmfDetector,
  parseTelephoneEvent,
} from '../../../../src/media/engine/dtmf.js';
import { decodeG711, encodeG711 } from '../../../../src/media/engine/g711.js';
import { tone } from '../../../../src/media/engine/pcm.js';
import { buildRtp, isRtcp, parseRtp, SequenceTracker } from '../../../../src/media/engine/rtp.js';

describe('RTP (RFC 3550 §5.1)', () => {
  it('round-trips a packet', () => {
    const pkt = buildRtp(8, 65535, 0xfffffff0, 0xdeadbeef, Uint8Array.of(1, 2, 3), true);
    const p = parseRtp(pkt)!;
    expect({ ...p, payload: Array.from(p.payload) }).toEqual({
      marker: true,
      payloadType: 8,
      sequence: 65535,
      timestamp: 0xfffffff0,
      ssrc: 0xdeadbeef,
      payload: [1, 2, 3],
    });
  });

  it('skips CSRCs and the header extension, and strips padding', () => {
    const header = [0xb1, 0x00, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3];
    const csrc = [0, 0, 0, 9];
    const ext = [0xbe, 0xde, 0, 1, 1, 2, 3, 4];
    const pkt = Uint8Array.from([...header, ...csrc, ...ext, 0xaa, 0xbb, 0, 0, 3]);
    expect(parseRtp(pkt)?.payload).toEqual(Uint8Array.of(0xaa, 0xbb));
  });

  it.each([
    ['empty', []],
    ['short', [0x80, 0, 0, 1]],
    ['version 1', [0x40, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]],
    ['CSRC count beyond the packet', [0x8f, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2]],
    ['extension beyond the packet', [0x90, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9]],
    ['zero padding count', [0xa0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0]],
    ['padding beyond the payload', [0xa0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 5, 9]],
  ])('rejects %s', (_name, bytes) => {
    expect(parseRtp(Uint8Array.from(bytes))).toBeNull();
  });

  it('tells RTCP from RTP under rtcp-mux (RFC 5761 §4)', () => {
    expect(isRtcp(Uint8Array.of(0x80, 200, 0, 6))).toBe(true);
    expect(isRtcp(Uint8Array.of(0x80, 0, 0, 6))).toBe(false);
    expect(isRtcp(Uint8Array.of(0x80, 0x80 | 72, 0, 6))).toBe(true);
  });

  it('counts loss from sequence gaps across wrap-around, reorder and a new SSRC', () => {
    const s = new SequenceTracker();
    for (const seq of [65533, 65534, 65535, 0, 2, 1, 5]) s.push(1, seq);
    expect(s.lost).toBe(2); // 3 and 4
    s.push(2, 100);
    s.push(2, 102);
    expect(s.lost).toBe(3);
    // A duplicate counts as received (RFC 3550 A.3), so it can mask a loss; never below zero.
    s.push(2, 102);
    expect(s.lost).toBe(2);
    s.push(2, 102);
    s.push(2, 102);
    expect(s.lost).toBe(2);
  });
});

describe('DTMF (RFC 4733)', () => {
  it('maps events to digits and back', () => {
    expect([0, 9, 10, 11, 12, 15].map(eventToDigit)).toEqual(['0', '9', '*', '#', 'A', 'D']);
    expect(eventToDigit(16)).toBeNull();
    expect(digitToEvent('#')).toBe(11);
    expect(digitToEvent('x')).toBeNull();
    expect(digitToEvent('12')).toBeNull();
  });

  it('parses the payload', () => {
    expect(parseTelephoneEvent(buildTelephoneEvent(11, true, 640, 10))).toEqual({
      event: 11,
      end: true,
      volume: 10,
      duration: 640,
    });
    expect(parseTelephoneEvent(Uint8Array.of(1, 2))).toBeNull();
  });

  it('reports each event once: start, updates and the three end packets', () => {
    const d = new DtmfDetector();
    const seen: (string | null)[] = [];
    for (const [ts, dur, end] of [
      [1000, 160, false],
      [1000, 320, false],
      [1000, 640, true],
      [1000, 640, true],
      [1000, 640, true],
      [2000, 640, true], // end packets only (start lost): still reported
      [2000, 640, true],
    ] as const) {
      seen.push(d.push(7, ts, buildTelephoneEvent(ts === 1000 ? 1 : 11, end, dur)));
    }
    expect(seen.filter((x) => x !== null)).toEqual(['1', '#']);
    // Same timestamp from another SSRC is another event.
    expect(d.push(8, 1000, buildTelephoneEvent(5, false, 160))).toBe('5');
    // Events that are not DTMF (e.g. 32, a fax tone) are ignored.
    expect(d.push(7, 3000, buildTelephoneEvent(32, false, 160))).toBeNull();
  });
});

describe('sending DTMF (Play digits)', () => {
  it('schedules each digit as 100 ms of events, an end, a gap; w pauses 0.5 s', () => {
    const steps = digitSchedule('1w#');
    expect(steps).toHaveLength(9 + 25 + 9);
    expect(steps[0]).toEqual({ event: 1, start: true, end: false, duration: 160 });
    expect(steps[4]).toEqual({ event: 1, start: false, end: false, duration: 800 });
    expect(steps[5]).toEqual({ event: 1, start: false, end: true, duration: 960 });
    expect(steps.slice(6, 34).every((s) => s === null)).toBe(true);
    expect(steps[34]).toMatchObject({ event: 11, start: true });
  });

  it('rejects what is not a digit', () => {
    expect(badDigit('0123456789*#ABCDwW')).toBeNull();
    expect(badDigit('12x')).toBe('x');
  });

  it('synthesises in-band dual tones (ITU-T Q.23)', () => {
    const pcm = digitsToPcm('5');
    expect(pcm.length).toBe(800 + 480);
    const power = (f: number): number => {
      let re = 0;
      let im = 0;
      for (let i = 0; i < 800; i++) {
        re += pcm[i]! * Math.cos((2 * Math.PI * f * i) / 8000);
        im += pcm[i]! * Math.sin((2 * Math.PI * f * i) / 8000);
      }
      return re * re + im * im;
    };
    // 5 = 770 Hz + 1336 Hz
    expect(power(770)).toBeGreaterThan(100 * power(697));
    expect(power(1336)).toBeGreaterThan(100 * power(1209));
  });
});

describe('in-band DTMF detection', () => {
  const frames = (pcm: Int16Array): Int16Array[] =>
    Array.from({ length: Math.floor(pcm.length / 160) }, (_, i) => pcm.subarray(i * 160, i * 160 + 160));

  it('detects every key once, also after a G.711 round trip', () => {
    const keys = '1234567890*#ABCD';
    for (const codec of ['PCMU', 'PCMA'] as const) {
      const pcm = decodeG711(codec, encodeG711(codec, digitsToPcm(keys)));
      const d = new InbandDtmfDetector();
      expect(
        frames(pcm)
          .map((f) => d.push(f))
          .filter((x) => x !== null)
          .join(''),
      ).toBe(keys);
    }
  });

  it('reports a held key once and a repeated key twice', () => {
    const d = new InbandDtmfDetector();
    const held = digitsToPcm('5').subarray(0, 800);
    const twice = [...frames(held), ...frames(held), new Int16Array(160), ...frames(held)];
    expect(twice.map((f) => d.push(f)).filter((x) => x !== null)).toEqual(['5', '5']);
  });

  it('stays silent on tones, noise and real speech (sip-tester g711a.pcap)', () => {
    const d = new InbandDtmfDetector();
    const noise = Int16Array.from({ length: 8000 }, () => Math.round((Math.random() - 0.5) * 20000));
    const speech = pcapAudio('/usr/share/sip-tester/g711a.pcap');
    expect(speech.length).toBeGreaterThan(50_000);
    const all = [
      ...frames(tone(440, 1000, 10000)),
      ...frames(tone(1000, 1000, 10000)),
      ...frames(noise),
      ...frames(speech),
    ];
    expect(all.map((f) => d.push(f)).filter((x) => x !== null)).toEqual([]);
  });
});

/** The A-law RTP payloads of a pcap (Ethernet/IPv4/UDP/RTP), decoded. */
function pcapAudio(path: string): Int16Array {
  const b = readFileSync(path);
  const chunks: Int16Array[] = [];
  for (let o = 24; o + 16 <= b.length; ) {
    const len = b.readUInt32LE(o + 8);
    const pkt = b.subarray(o + 16, o + 16 + len);
    o += 16 + len;
    const ihl = (pkt[14]! & 15) * 4;
    const rtp = parseRtp(pkt.subarray(14 + ihl + 8));
    if (rtp?.payloadType === 8) chunks.push(decodeG711('PCMA', rtp.payload));
  }
  const out = new Int16Array(chunks.reduce((n, c) => n + c.length, 0));
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}
