/**
 * RFC 4733 telephone-event parsing (§2.3) with de-duplication: a digit is reported once per event,
 * however many start, continuation and (triplicated) end packets carry it. Events are told apart by
 * SSRC and RTP timestamp, which stays constant for the whole event (§2.5.1.2).
 */
import { MEDIA } from './constants.js';

const EVENT_DIGITS = '0123456789*#ABCD';

/** The DTMF character for an RFC 4733 event code (0–15), or null for other events. */
export function eventToDigit(event: number): string | null {
  return EVENT_DIGITS[event] ?? null;
}

/** The RFC 4733 event code for a DTMF character, or null. */
export function digitToEvent(digit: string): number | null {
  const i = EVENT_DIGITS.indexOf(digit.toUpperCase());
  return i < 0 || digit.length !== 1 ? null : i;
}

/** One telephone-event payload (RFC 4733 §2.3): event code, E bit, volume, duration in timestamp units. */
export interface TelephoneEvent {
  readonly event: number;
  readonly end: boolean;
  readonly volume: number;
  readonly duration: number;
}

/** Parses a telephone-event payload (4 octets; more are ignored, §2.3); null when too short. */
export function parseTelephoneEvent(payload: Uint8Array): TelephoneEvent | null {
  if (payload.length < 4) return null;
  return {
    event: payload[0]!,
    end: (payload[1]! & 0x80) !== 0,
    volume: payload[1]! & 0x3f,
    duration: (payload[2]! << 8) | payload[3]!,
  };
}

/** Builds a telephone-event payload. */
export function buildTelephoneEvent(event: number, end: boolean, duration: number, volume = 10): Uint8Array {
  return Uint8Array.of(
    event & 0xff,
    (end ? 0x80 : 0) | (volume & 0x3f),
    (duration >> 8) & 0xff,
    duration & 0xff,
  );
}

/** One tick of sent DTMF: an RFC 4733 packet (or three, for the end) or nothing (gap, pause). */
export interface DigitStep {
  readonly event: number;
  /** First packet of the event: new event timestamp, marker bit (§2.5.1.1). */
  readonly start: boolean;
  readonly end: boolean;
  /** Duration so far in timestamp units (§2.5.1.3). */
  readonly duration: number;
}

/** Validates Play digits; returns the offending character, or null when all are valid. */
export function badDigit(digits: string): string | null {
  for (const c of digits) if (c !== 'w' && c !== 'W' && digitToEvent(c) === null) return c;
  return null;
}

/**
 * The per-tick schedule sending `digits` as RFC 4733 events: each digit is DIGIT_TONE_MS of
 * packets every 20 ms with growing duration, then the end packet (sent three times, §2.5.1.4),
 * then DIGIT_GAP_MS of nothing; `w` adds DIGIT_PAUSE_MS of nothing.
 */
export function digitSchedule(digits: string): (DigitStep | null)[] {
  const ticks = (ms: number): number => Math.max(1, Math.round(ms / MEDIA.TICK_MS));
  const steps: (DigitStep | null)[] = [];
  for (const c of digits) {
    const event = digitToEvent(c);
    if (event === null) {
      for (let i = 0; i < ticks(MEDIA.DIGIT_PAUSE_MS); i++) steps.push(null);
      continue;
    }
    const n = ticks(MEDIA.DIGIT_TONE_MS);
    for (let i = 0; i < n; i++) {
      steps.push({ event, start: i === 0, end: false, duration: (i + 1) * MEDIA.FRAME_SAMPLES });
    }
    steps.push({ event, start: false, end: true, duration: (n + 1) * MEDIA.FRAME_SAMPLES });
    for (let i = 0; i < ticks(MEDIA.DIGIT_GAP_MS); i++) steps.push(null);
  }
  return steps;
}

/** ITU-T Q.23 DTMF frequency pairs (row, column) by event code 0–15. */
const DTMF_HZ: readonly (readonly [number, number])[] = [
  [941, 1336],
  [697, 1209],
  [697, 1336],
  [697, 1477],
  [770, 1209],
  [770, 1336],
  [770, 1477],
  [852, 1209],
  [852, 1336],
  [852, 1477],
  [941, 1209],
  [941, 1477],
  [697, 1633],
  [770, 1633],
  [852, 1633],
  [941, 1633],
];

/** The same digits as in-band dual tones (for a far end without telephone-event). */
export function digitsToPcm(digits: string): Int16Array {
  const sr = MEDIA.SAMPLE_RATE;
  const samples = (ms: number): number => Math.round((sr * ms) / 1000);
  const parts: Int16Array[] = [];
  for (const c of digits) {
    const event = digitToEvent(c);
    if (event === null) {
      parts.push(new Int16Array(samples(MEDIA.DIGIT_PAUSE_MS)));
      continue;
    }
    const [low, high] = DTMF_HZ[event]!;
    const tone = new Int16Array(samples(MEDIA.DIGIT_TONE_MS));
    for (let i = 0; i < tone.length; i++) {
      tone[i] = Math.round(
        7000 * Math.sin((2 * Math.PI * low * i) / sr) + 7000 * Math.sin((2 * Math.PI * high * i) / sr),
      );
    }
    parts.push(tone, new Int16Array(samples(MEDIA.DIGIT_GAP_MS)));
  }
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** Turns a stream of telephone-event packets into digits, each reported exactly once. */
export class DtmfDetector {
  private readonly seen: string[] = [];

  /** Returns the digit when this packet starts a new event, else null (continuation, end, repeat). */
  push(ssrc: number, timestamp: number, payload: Uint8Array): string | null {
    const ev = parseTelephoneEvent(payload);
    if (!ev) return null;
    const digit = eventToDigit(ev.event);
    if (digit === null) return null;
    const key = `${ssrc}:${timestamp}`;
    if (this.seen.includes(key)) return null;
    this.seen.push(key);
    if (this.seen.length > MEDIA.DTMF_DEDUP_MEMORY) this.seen.shift();
    return digit;
  }
}

const ROWS = [697, 770, 852, 941] as const;
const COLS = [1209, 1336, 1477, 1633] as const;
const KEYPAD = ['123A', '456B', '789C', '*0#D'] as const;

/** Goertzel coefficients for the 8 DTMF frequencies at 8 kHz. */
const COEFFS = [...ROWS, ...COLS].map((f) => 2 * Math.cos((2 * Math.PI * f) / MEDIA.SAMPLE_RATE));

/**
 * In-band DTMF (ITU-T Q.24-style, simplified) for far ends that did not negotiate telephone-event:
 * Goertzel power at the 8 DTMF frequencies per 20 ms frame. A frame holds a digit when its
 * strongest row and column tone each carry ≥ 25 % of the frame's energy, each clearly beats the
 * other candidates of its group, and the level is above speech-pause noise; a digit is reported
 * after two consecutive frames agree, and again only after a frame without it.
 */
export class InbandDtmfDetector {
  private candidate: string | null = null;
  private reported: string | null = null;
  private readonly power = new Float64Array(8);

  /** Feeds one frame; returns a newly detected digit, else null. */
  push(frame: Int16Array): string | null {
    const d = this.classify(frame);
    if (d === null) {
      this.candidate = null;
      this.reported = null;
      return null;
    }
    if (d === this.reported) return null;
    if (d === this.candidate) {
      this.reported = d;
      return d;
    }
    this.candidate = d;
    return null;
  }

  private classify(frame: Int16Array): string | null {
    const n = frame.length;
    let energy = 0;
    for (let i = 0; i < n; i++) energy += frame[i]! * frame[i]!;
    if (n === 0 || energy / n < 300 * 300) return null;
    for (let k = 0; k < 8; k++) {
      const c = COEFFS[k]!;
      let s1 = 0;
      let s2 = 0;
      for (let i = 0; i < n; i++) {
        const s0 = frame[i]! + c * s1 - s2;
        s2 = s1;
        s1 = s0;
      }
      // Share of the frame's energy at this frequency (1 for a pure tone there).
      this.power[k] = (2 * (s1 * s1 + s2 * s2 - c * s1 * s2)) / (n * energy);
    }
    const best = (from: number): [number, number] => {
      let i = from;
      for (let k = from + 1; k < from + 4; k++) if (this.power[k]! > this.power[i]!) i = k;
      let second = 0;
      for (let k = from; k < from + 4; k++) if (k !== i) second = Math.max(second, this.power[k]!);
      return [i - from, second];
    };
    const [row, rowSecond] = best(0);
    const [col, colSecond] = best(4);
    const r = this.power[row]!;
    const c = this.power[4 + col]!;
    if (r < 0.25 || c < 0.25) return null;
    if (rowSecond > r / 8 || colSecond > c / 8) return null;
    return KEYPAD[row]![col]!;
  }
}
