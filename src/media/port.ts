/**
 * The media port: what call actors may ask of the media engine, and what they hear back, in domain
 * words. The engine runs in its own process with one 20 ms clock; this port is the
 * main-process façade that talks to it over IPC.
 *
 * Guarantees:
 * - Commands never throw synchronously; every command's outcome comes back as a `MediaEvent`
 *   carrying the endpoint id (and the command's `opId` where a command can finish).
 * - Exactly one `*Done` / `*Failed` event per started play, collect or record operation, whatever
 *   ends it (completion, interruption by DTMF, `stop`, `release`, an engine crash).
 * - An engine crash is reported as `media.endpointLost` for every endpoint it held; the engine is
 *   restarted and new endpoints work again.
 * - Endpoints are identified by the caller (the call sid, or `CA…:b` for a second leg), so the
 *   actor's snapshot can name them; live sockets stay in the engine.
 */

/** G.711 payload formats the engine speaks (RFC 3551) plus RFC 4733 telephone-event. */
export type Codec = 'PCMU' | 'PCMA';

/** What to play: a local WAV file, an http(s) URL (downloaded, cached, converted), or speech. */
export type PlaySource =
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'url'; readonly url: string }
  | {
      readonly kind: 'tts';
      readonly text: string;
      /** Markup voice (`man`, `woman`, `alice`, `Polly.*`...) mapped to an espeak-ng voice. */
      readonly voice?: string;
      /** BCP 47 language from the markup (`en-US`, `es`, ...). */
      readonly language?: string;
    }
  | { readonly kind: 'silence'; readonly ms: number }
  | { readonly kind: 'tone'; readonly frequencyHz: number; readonly ms: number }
  /**
   * DTMF to the far end (TwiML `<Play digits>`, `<Dial sendDigits>`): `0-9 * # A-D`, `w` = 0.5 s
   * pause. Sent as RFC 4733 events when the far end negotiated telephone-event, else as in-band tones.
   */
  | { readonly kind: 'digits'; readonly digits: string };

/** Options of `play` (TwiML Play/Say `loop`; Gather-nested prompts are interruptible). */
export interface PlayOptions {
  /** Times to play the source; 0 = until stopped (Twilio `loop="0"`). Default 1. */
  readonly loop?: number;
  /** A DTMF digit received while playing stops the play (Gather's nested prompts). Default false. */
  readonly interruptOnDtmf?: boolean;
}

/** Options of `collect` (TwiML Gather `timeout`, `finishOnKey`, `numDigits`). */
export interface CollectOptions {
  /** Seconds to wait for the next digit (Gather `timeout`, default 5). */
  readonly timeoutSeconds: number;
  /** Digit that ends input and is not part of the result (Gather `finishOnKey`, default `#`; '' = none). */
  readonly finishOnKey: string;
  /** Stop after this many digits (Gather `numDigits`); undefined = unlimited. */
  readonly numDigits?: number;
}

/** Options of `record` (TwiML Record). */
export interface RecordOptions {
  /** Recording sid (`RE…`): the WAV is written through the recording-storage port under this sid. */
  readonly recordingSid: string;
  /** Seconds (Record `maxLength`, default 3600). */
  readonly maxLengthSeconds: number;
  /** Seconds of silence that end the recording (Record `timeout`, default 5; 0 = never). */
  readonly silenceTimeoutSeconds: number;
  /** Digits that end the recording (Record `finishOnKey`, default `1234567890*#`). */
  readonly finishOnKey: string;
  /** Play a beep before recording (Record `playBeep`, default true). */
  readonly playBeep: boolean;
  /**
   * `in` (default): what the far end sends. `both`: mixed with what the endpoint hears from its
   * bridge peer, i.e. both parties of a `<Dial record>`.
   */
  readonly mix?: 'in' | 'both';
  /** Leave out silence before the first voiced frame (default true, TwiML `trim-silence`). */
  readonly trimLeadingSilence?: boolean;
}

/** Options of `conferenceJoin` (TwiML Conference `muted`, `beep`, `waitUrl`). */
export interface ConferenceJoinOptions {
  /** Mixer name, scoped per account by the caller (e.g. `AC…:room`). */
  readonly room: string;
  readonly muted?: boolean;
  /** Beep to the room when this participant joins/leaves. */
  readonly beep?: boolean;
  /** Played to this participant while they are alone in the room; looped. */
  readonly waitMusic?: PlaySource;
}

/** A local RTP endpoint as created by the engine. */
export interface EndpointInfo {
  readonly endpointId: string;
  readonly address: string;
  readonly port: number;
  /** Our SDP (offer when created without a remote SDP, else the answer). */
  readonly sdp: string;
}

/** Per-endpoint counters since the endpoint was created. */
export interface EndpointStats {
  readonly endpointId: string;
  readonly packetsIn: number;
  readonly packetsOut: number;
  /** Expected minus received, from RTP sequence numbers (RFC 3550 A.3). */
  readonly packetsLost: number;
  /** Ticks of the engine clock that ran more than 5 ms late while this endpoint existed. */
  readonly lateTicks: number;
  /** Datagrams that were not valid RTP (counted and dropped, never fatal). */
  readonly packetsMalformed: number;
  /** Valid RTP from a source other than the latched one, or with a payload type we did not negotiate. */
  readonly packetsIgnored: number;
  /** Audio packets dropped by the jitter buffer: older than audio already played, or duplicates. */
  readonly packetsLate: number;
}

/** Engine-wide load, for the supervisor metrics. */
export interface EngineLoad {
  readonly endpoints: number;
  /** Tick lateness percentiles over the last reporting window, milliseconds. */
  readonly tickLateP50Ms: number;
  readonly tickLateP99Ms: number;
  readonly tickLateMaxMs: number;
  /** Engine process CPU, percent of one core, over the last window. */
  readonly cpuPercent: number;
  readonly rssBytes: number;
  readonly restarts: number;
}

/** Typed outcomes of media commands (STYLE: events named by source). */
export type MediaEvent =
  | { readonly type: 'media.endpointReady'; readonly endpoint: EndpointInfo }
  | {
      readonly type: 'media.endpointFailed';
      readonly endpointId: string;
      /** `no-common-codec`, `bad-sdp`, `no-port`, `exists` (id in use), `no-such-endpoint`, `engine-down` (closed). */
      readonly reason: string;
      readonly message: string;
    }
  | {
      readonly type: 'media.sdpApplied';
      readonly endpointId: string;
      readonly sdp: string;
      /** The codec on the wire; `opus` only on a WebRTC endpoint (the engine mixes 8 kHz PCM either way). */
      readonly codec: Codec | 'opus';
    }
  | {
      readonly type: 'media.playDone';
      readonly endpointId: string;
      readonly opId: string;
      /** `completed` | `interrupted` (DTMF) | `stopped` | `released`. */
      readonly reason: 'completed' | 'interrupted' | 'stopped' | 'released';
    }
  | {
      readonly type: 'media.playFailed';
      readonly endpointId: string;
      readonly opId: string;
      /**
       * `fetch-failed`, `not-audio`, `too-large`, `tts-failed`, `no-such-file`, `bad-digits`, `no-such-endpoint`,
       * `engine-down` (the engine crashed while playing).
       */
      readonly reason: string;
      readonly message: string;
    }
  /** A DTMF digit received on the endpoint (RFC 4733), whether or not a collect is running. */
  | { readonly type: 'media.dtmf'; readonly endpointId: string; readonly digit: string }
  | {
      readonly type: 'media.collectDone';
      readonly endpointId: string;
      readonly opId: string;
      readonly digits: string;
      /** `finish-key` | `num-digits` | `timeout` | `stopped` | `released` | `lost` (engine crash). */
      readonly reason: 'finish-key' | 'num-digits' | 'timeout' | 'stopped' | 'released' | 'lost';
    }
  | {
      readonly type: 'media.recordDone';
      readonly endpointId: string;
      readonly opId: string;
      readonly recordingSid: string;
      readonly durationSeconds: number;
      /** The digit that ended it, when one did. */
      readonly digits: string;
      readonly reason: 'finish-key' | 'silence' | 'max-length' | 'stopped' | 'released';
    }
  | {
      readonly type: 'media.recordFailed';
      readonly endpointId: string;
      readonly opId: string;
      readonly recordingSid: string;
      readonly message: string;
    }
  | {
      readonly type: 'media.conferenceJoined';
      readonly endpointId: string;
      readonly room: string;
      readonly participants: number;
    }
  | {
      readonly type: 'media.conferenceLeft';
      readonly endpointId: string;
      readonly room: string;
      readonly participants: number;
    }
  /** The engine lost the endpoint (engine crash or restart): the call should end or re-create it. */
  | { readonly type: 'media.endpointLost'; readonly endpointId: string; readonly reason: string }
  | { readonly type: 'media.released'; readonly endpointId: string };

/** The media port (see the file header for its guarantees). */
export interface MediaPort {
  /**
   * Creates an RTP endpoint. With `remoteSdp` (an offer) the engine answers it; without, it makes
   * an offer. A WebRTC offer (`UDP/TLS/RTP/SAVPF` with a fingerprint and ICE credentials) gets a
   * WebRTC endpoint (ICE-lite, DTLS-SRTP, Opus or G.711); `webrtc: true` without `remoteSdp`
   * makes a WebRTC offer (to call a browser). Either way every operation below works the same.
   * Outcome: `media.endpointReady` or `media.endpointFailed`.
   */
  createEndpoint(
    endpointId: string,
    opts?: { readonly remoteSdp?: string; readonly codecs?: readonly Codec[]; readonly webrtc?: boolean },
  ): void;
  /** Applies the remote answer (or a new offer from a re-INVITE). Outcome: `media.sdpApplied` or `media.endpointFailed`. */
  applyRemoteSdp(endpointId: string, sdp: string): void;
  /** Starts playing; outcome `media.playDone` or `media.playFailed` with the same opId. */
  play(endpointId: string, opId: string, source: PlaySource, opts?: PlayOptions): void;
  /** Starts collecting DTMF; outcome `media.collectDone`. Digits already buffered since the last collect count. */
  collect(endpointId: string, opId: string, opts: CollectOptions): void;
  /** Starts recording what the far end sends; outcome `media.recordDone` or `media.recordFailed`. */
  record(endpointId: string, opId: string, opts: RecordOptions): void;
  /** Stops the running play/collect/record on the endpoint (each ends with reason `stopped`). */
  stop(endpointId: string): void;
  /** Forwards audio both ways between two endpoints until unbridged or released. */
  bridge(a: string, b: string): void;
  unbridge(a: string, b: string): void;
  conferenceJoin(endpointId: string, opts: ConferenceJoinOptions): void;
  conferenceLeave(endpointId: string): void;
  /** Mute: what the endpoint receives is not forwarded/mixed (bridge and conference). */
  setMuted(endpointId: string, muted: boolean): void;
  /** Releases the endpoint (ends its operations, leaves bridges and rooms); `media.released`. */
  release(endpointId: string): void;
  /** Subscribe to events; returns the unsubscribe function. */
  subscribe(listener: (event: MediaEvent) => void): () => void;
  stats(endpointId: string): Promise<EndpointStats | null>;
  load(): Promise<EngineLoad>;
  /** Stops the engine process; idempotent. */
  close(): Promise<void>;
}
