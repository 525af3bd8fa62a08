/**
 * Media timing and limits, one named table (STYLE: protocol timers in one place).
 * G.711 at 8 kHz, 20 ms packetisation (RFC 3551 §4.5.14 default ptime).
 */
export const MEDIA = {
  /** Sample rate of every PCM buffer in the engine (G.711, RFC 3551 §4.5.14). */
  SAMPLE_RATE: 8000,
  /** Clock period: one RTP packet per endpoint per tick. */
  TICK_MS: 20,
  /** Samples per tick (8000 Hz × 20 ms). */
  FRAME_SAMPLES: 160,
  /** RFC 4733 telephone-event payload type we offer. */
  TELEPHONE_EVENT_PT: 101,
  /** Input FIFO: playout starts once this many samples are buffered (40 ms of jitter absorbed). */
  JITTER_PREFILL_SAMPLES: 320,
  /** Input FIFO capacity; older samples are dropped beyond it (120 ms). */
  JITTER_MAX_SAMPLES: 960,
  /** A late clock catches up at most this many ticks at once; beyond, ticks are skipped and counted. */
  MAX_CATCH_UP_TICKS: 5,
  /** Frame RMS below this counts as silence for Record's timeout (about −44 dBFS). */
  SILENCE_RMS: 200,
  /** Beep before Record and on conference join/leave. */
  BEEP_HZ: 1000,
  BEEP_MS: 400,
  CONFERENCE_BEEP_MS: 200,
  /** Sent DTMF (Play digits): tone length, gap after each digit, and the `w` pause. */
  DIGIT_TONE_MS: 100,
  DIGIT_GAP_MS: 60,
  DIGIT_PAUSE_MS: 500,
  /** Digits kept for the next collect when none is running. */
  DIGIT_BUFFER_MAX: 32,
  /** RFC 4733 events remembered per SSRC for end-packet de-duplication. */
  DTMF_DEDUP_MEMORY: 16,
  /** Recorded audio is appended to the spool file every this many frames (1 s). */
  RECORD_FLUSH_FRAMES: 50,
  /** Ticks kept for load percentiles (60 s). */
  LOAD_WINDOW_TICKS: 3000,
  /** HTTP fetch of a Play URL: total time allowed. */
  FETCH_TIMEOUT_MS: 10_000,
  /** espeak-ng and sox runs are killed after this long. */
  CONVERT_TIMEOUT_MS: 15_000,
  /** Decoded prompts kept in engine memory (bytes of PCM). */
  PROMPT_MEMORY_BYTES: 64 * 1024 * 1024,
} as const;
