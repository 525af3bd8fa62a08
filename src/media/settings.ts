/**
 * The media engine's settings, declared once. src/config.ts fills {@link MediaSettings} from the
 * environment (`config.media`); `MediaEngine` adds the Play-URL policy the composition root decides
 * and hands the whole to the engine process (ipc.ts `init`); each part of the engine takes the
 * slice it uses with `Pick<>`, so a setting keeps one name and one meaning from env to use.
 */

/** What a deployment configures for media (RTP_*, MEDIA_* environment variables). */
export interface MediaSettings {
  /** Address the RTP sockets bind to and SDP offers and answers advertise. */
  readonly rtpHost: string;
  /** RTP port range, inclusive; endpoints bind even ports in it (RFC 3550 §11). */
  readonly rtpPortMin: number;
  readonly rtpPortMax: number;
  /** Root of the Play URL download cache (and of the recording spool unless one is given). */
  readonly cacheDir: string;
  /** Bound on the download cache's directory; the least recently used files are evicted first. */
  readonly cacheMaxBytes: number;
  /** Largest Play URL body accepted, before conversion. */
  readonly maxDownloadBytes: number;
  /**
   * Addresses (IPv4, comma-separated in `WEBRTC_PUBLIC_ADDRESS`) a WebRTC endpoint advertises as
   * extra host candidates beside `rtpHost`, with the same port: the public side of a 1:1 NAT in
   * front of the engine. Empty: only `rtpHost` is advertised.
   */
  readonly webrtcPublicAddresses?: readonly string[];
  /**
   * Codecs a WebRTC endpoint offers and prefers, in order (`WEBRTC_CODECS`, default
   * `opus,PCMU,PCMA`). Opus costs far more engine CPU than G.711 (docs/benchmarks.md); putting
   * PCMU first trades browser audio quality for capacity. Absent: the default.
   */
  readonly webrtcCodecs?: readonly WebRtcCodecName[];
}

/** Codecs a WebRTC endpoint can use (all transcoded to and from the engine's 8 kHz PCM). */
export const WEBRTC_CODEC_NAMES = ['opus', 'PCMU', 'PCMA'] as const;
export type WebRtcCodecName = (typeof WEBRTC_CODEC_NAMES)[number];

/**
 * How Play URLs are fetched: the same SSRF policy as webhooks (the composition root passes
 * `config.webhooks.blockPrivate`) and a total time limit.
 */
export interface PlayUrlPolicy {
  /** Play URLs to loopback and private addresses are refused too (metadata addresses always are). */
  readonly blockPrivateUrls: boolean;
  /** Total time allowed to download a Play URL, headers and body (default 10 s). */
  readonly urlTimeoutMs?: number;
}
