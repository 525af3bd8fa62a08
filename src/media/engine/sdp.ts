/**
 * SDP offer/answer for one G.711 audio stream (RFC 3264 over RFC 4566, parsed with `sdp-transform`,
 * written from a template). Pure functions; the endpoint keeps the negotiated result.
 */
import sdpTransform from 'sdp-transform';
import type { Codec } from '../port.js';
import { MEDIA } from './constants.js';
import { CODEC_PT } from './g711.js';

/** SDP direction attribute (RFC 4566 §6, RFC 3264 §5.1). */
export type Direction = 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';

/** What we learned from the remote description. */
export interface RemoteMedia {
  readonly address: string;
  readonly port: number;
  readonly codec: Codec;
  /** Payload type the remote uses for the codec (static 0/8, or dynamic when it said so). */
  readonly codecPt: number;
  /** Remote telephone-event payload type, or null when not offered (RFC 4733 §7.1.1). */
  readonly eventPt: number | null;
  /** The remote's direction attribute (RFC 3264 §6.1). */
  readonly direction: Direction;
}

/** Outcome of reading a remote offer or answer: the stream, or why it is unusable. */
export type NegotiationResult =
  | { readonly ok: true; readonly remote: RemoteMedia }
  | { readonly ok: false; readonly reason: 'bad-sdp' | 'no-common-codec'; readonly message: string };

/** Our side of the stream. */
export interface LocalDescription {
  readonly address: string;
  readonly port: number;
  readonly sessionId: number;
  readonly version: number;
  /** Codecs in preference order; in an answer exactly one. */
  readonly codecs: readonly { readonly codec: Codec; readonly pt: number }[];
  readonly eventPt: number | null;
  readonly direction: Direction;
}

/**
 * Writes our SDP: the lines `sdp-transform` writes for this description, in its order and with its
 * CRLFs, as one template (every call's answer is written here; the generic writer cost about twice
 * the negotiation itself). A test holds the two to the same text.
 */
export function buildSdp(d: LocalDescription): string {
  const rate = MEDIA.SAMPLE_RATE;
  let payloads = '';
  let rtpmap = '';
  for (const c of d.codecs) {
    payloads += ` ${c.pt}`;
    rtpmap += `a=rtpmap:${c.pt} ${c.codec}/${rate}\r\n`;
  }
  if (d.eventPt !== null) {
    payloads += ` ${d.eventPt}`;
    rtpmap += `a=rtpmap:${d.eventPt} telephone-event/${rate}\r\na=fmtp:${d.eventPt} 0-16\r\n`;
  }
  return (
    `v=0\r\no=switchboard ${d.sessionId} ${d.version} IN IP4 ${d.address}\r\ns=switchboard\r\n` +
    `c=IN IP4 ${d.address}\r\nt=0 0\r\nm=audio ${d.port} RTP/AVP${payloads}\r\n` +
    `${rtpmap}a=ptime:${MEDIA.TICK_MS}\r\na=${d.direction}\r\n`
  );
}

/** The direction we answer with (RFC 3264 §6.1). */
export function answerDirection(remote: Direction): Direction {
  return remote === 'sendonly' ? 'recvonly' : remote === 'recvonly' ? 'sendonly' : remote;
}

/**
 * Reads a remote offer or answer: the first active RTP/AVP audio stream and, in the remote's
 * order of preference, the first codec we allow.
 */
export function negotiate(sdp: string, allowed: readonly Codec[]): NegotiationResult {
  let parsed: sdpTransform.SessionDescription;
  try {
    parsed = sdpTransform.parse(sdp);
  } catch (err) {
    return { ok: false, reason: 'bad-sdp', message: `unparseable SDP: ${(err as Error).message}` };
  }
  if (!Array.isArray(parsed.media) || parsed.media.length === 0) {
    return { ok: false, reason: 'bad-sdp', message: 'no m= line' };
  }
  const audio = parsed.media.find((m) => m.type === 'audio' && m.port > 0);
  if (!audio) return { ok: false, reason: 'bad-sdp', message: 'no active audio stream' };
  if (audio.protocol !== 'RTP/AVP' && audio.protocol !== 'RTP/AVPF') {
    return { ok: false, reason: 'no-common-codec', message: `unsupported transport ${audio.protocol}` };
  }
  const address = audio.connection?.ip ?? parsed.connection?.ip;
  if (!address || !/^\d{1,3}(\.\d{1,3}){3}$/.test(address)) {
    return { ok: false, reason: 'bad-sdp', message: `no IPv4 connection address (${address ?? 'none'})` };
  }
  if (!Number.isInteger(audio.port) || audio.port > 65535) {
    return { ok: false, reason: 'bad-sdp', message: `bad port ${audio.port}` };
  }
  const payloads = String(audio.payloads ?? '')
    .trim()
    .split(/\s+/)
    .map(Number)
    .filter((n) => Number.isInteger(n) && n >= 0 && n < 128);
  const rtpmap = new Map<number, string>();
  for (const r of audio.rtp ?? []) {
    if ((r.rate ?? MEDIA.SAMPLE_RATE) === MEDIA.SAMPLE_RATE) rtpmap.set(r.payload, r.codec.toUpperCase());
  }
  let chosen: { codec: Codec; pt: number } | null = null;
  let eventPt: number | null = null;
  for (const pt of payloads) {
    const name = rtpmap.get(pt) ?? (pt === CODEC_PT.PCMU ? 'PCMU' : pt === CODEC_PT.PCMA ? 'PCMA' : '');
    if (name === 'TELEPHONE-EVENT') {
      eventPt ??= pt;
      continue;
    }
    if (!chosen && (name === 'PCMU' || name === 'PCMA') && allowed.includes(name))
      chosen = { codec: name, pt };
  }
  if (!chosen) {
    return {
      ok: false,
      reason: 'no-common-codec',
      message: `remote offers ${[...new Set(payloads.map((p) => rtpmap.get(p) ?? String(p)))].join(', ') || 'nothing'}; we support ${allowed.join(', ')}`,
    };
  }
  const direction = (audio.direction ?? parsed.direction ?? 'sendrecv') as Direction;
  return {
    ok: true,
    remote: { address, port: audio.port, codec: chosen.codec, codecPt: chosen.pt, eventPt, direction },
  };
}
