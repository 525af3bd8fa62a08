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
