/**
 * What the WebRTC side needs of SDP beyond werift: recognising a browser's offer, finishing our
 * description (ICE-lite host candidates on RTP_HOST plus the configured public addresses, DTLS
 * passive in answers), and reading the negotiated codecs. Pure functions over SDP text.
 */
import sdpTransform from 'sdp-transform';

/** A WebRTC description: DTLS-SRTP profile, a fingerprint and ICE credentials (RFC 8829 §5.1.1). */
export function isWebRtcSdp(sdp: string): boolean {
  // Both profiles below contain SAVP: a plain RTP/AVP offer (every SIP call) is not parsed twice.
  if (!/savp/i.test(sdp)) return false;
  let parsed: sdpTransform.SessionDescription;
  try {
    parsed = sdpTransform.parse(sdp);
  } catch {
    return false;
  }
  const audio = (parsed.media ?? []).find((m) => m.type === 'audio');
  if (!audio || !/UDP\/TLS\/RTP\/SAVPF?|RTP\/SAVPF/i.test(String(audio.protocol))) return false;
  const fingerprint = audio.fingerprint ?? parsed.fingerprint;
  const ufrag = audio.iceUfrag ?? parsed.iceUfrag;
  const pwd = audio.icePwd ?? parsed.icePwd;
  return Boolean(fingerprint && ufrag && pwd);
}

/** Where our candidates live. */
export interface CandidateAddresses {
  /** The address our ICE socket is bound to (RTP_HOST). */
  readonly host: string;
  /** Extra addresses advertised with the same port (WEBRTC_PUBLIC_ADDRESS). */
  readonly publicAddresses: readonly string[];
}

/** An answer from the ICE-lite side is DTLS passive: the full ICE agent (the browser) connects. */
export function makePassive(sdp: string): string {
  return sdp.replace(/^a=setup:(active|actpass)$/gm, 'a=setup:passive');
}

const ANY = new Set(['0.0.0.0', '']);

/**
 * Keeps the host candidates on our bound address (werift lists every interface, but its socket is
 * bound to one), adds the public addresses with the same port, drops trickle (we answer with every
 * candidate), and points `c=`/`m=` at the default candidate (RFC 8839 §5.1) for SIP gateways.
 */
export function finishCandidates(sdp: string, where: CandidateAddresses): { sdp: string; port: number } {
  const eol = sdp.includes('\r\n') ? '\r\n' : '\n';
  const lines = sdp.split(/\r?\n/).filter((l) => l !== '');
  const out: string[] = [];
  let port = 0;
  let foundation = '';
  let priority = 0;
  for (const line of lines) {
    if (line.startsWith('a=candidate:')) {
      const f = line.slice(12).split(' ');
      const [found, component, transport, prio, ip, p] = f;
      if (component !== '1' || transport?.toLowerCase() !== 'udp' || !ip || !p) continue;
      if (!ANY.has(where.host) && ip !== where.host) continue;
      if (ip.includes(':')) continue;
      if (port === 0) {
        port = Number(p);
        foundation = found ?? '1';
        priority = Number(prio);
      }
      out.push(line);
      continue;
    }
    if (line === 'a=end-of-candidates' || line === 'a=ice-options:trickle') continue;
    out.push(line);
  }
  // Insert the public candidates and the end marker after the last remaining candidate.
  const lastCandidate = out.findLastIndex((l) => l.startsWith('a=candidate:'));
  const extra = where.publicAddresses.map(
    (ip, i) =>
      `a=candidate:${foundation}p${i} 1 udp ${Math.max(1, priority - 1 - i)} ${ip} ${port} typ host generation 0`,
  );
  if (lastCandidate >= 0) out.splice(lastCandidate + 1, 0, ...extra, 'a=end-of-candidates');
  const defaultIp = where.publicAddresses[0] ?? (ANY.has(where.host) ? '0.0.0.0' : where.host);
  const finished = out.map((l) => {
    if (port > 0 && /^m=audio \d+ /.test(l)) return l.replace(/^m=audio \d+ /, `m=audio ${port} `);
    if (port > 0 && l.startsWith('c=IN IP4 ')) return `c=IN IP4 ${defaultIp}`;
    return l;
  });
  return { sdp: finished.join(eol) + eol, port };
}

/** What our Opus receives and sends at most: the engine plays and records 8 kHz. */
const NARROWBAND = { maxplaybackrate: '8000', 'sprop-maxcapturerate': '8000' } as const;

/**
 * Marks every Opus payload type of our description narrowband (RFC 7587 §6.1): the engine plays and
 * records 8 kHz, so audio above 4 kHz would be decoded only to be thrown away. `maxplaybackrate`
 * makes a browser encode narrowband (libwebrtc caps its encoder's bandwidth, and its bitrate with
 * it), which costs us about a third as much to decode as full-band; `sprop-maxcapturerate` says
 * that what we send is narrowband too. werift copies the offer's Opus parameters into its answer,
 * hence a rewrite of the text rather than codec parameters.
 */
export function narrowbandOpus(sdp: string): string {
  const eol = sdp.includes('\r\n') ? '\r\n' : '\n';
  const lines = sdp.split(/\r?\n/);
  const opus = new Set<string>();
  for (const l of lines) {
    const m = /^a=rtpmap:(\d+) opus\/48000/i.exec(l);
    if (m) opus.add(m[1]!);
  }
  const withFmtp = new Set<string>();
  const out = lines.map((l) => {
    const m = /^a=fmtp:(\d+) (.*)$/.exec(l);
    if (!m || !opus.has(m[1]!)) return l;
    withFmtp.add(m[1]!);
    const params = m[2]!
      .split(';')
      .map((p) => p.trim())
      .filter((p) => p !== '' && !(p.split('=')[0]!.toLowerCase() in NARROWBAND));
    for (const [k, v] of Object.entries(NARROWBAND)) params.push(`${k}=${v}`);
    return `a=fmtp:${m[1]} ${params.join(';')}`;
  });
  const narrowband = Object.entries(NARROWBAND)
    .map(([k, v]) => `${k}=${v}`)
    .join(';');
  for (const pt of opus) {
    if (withFmtp.has(pt)) continue;
    const at = out.findIndex((l) => l.startsWith(`a=rtpmap:${pt} `));
    out.splice(at + 1, 0, `a=fmtp:${pt} ${narrowband}`);
  }
  return out.join(eol);
}

/** An audio codec of ours as werift names it. */
export type WebRtcCodec = 'opus' | 'PCMU' | 'PCMA';

/** What both sides will use, read from the negotiated (answer) audio section. */
export interface WebRtcMedia {
  /** Codec both sides send: the first one the answer lists (RFC 3264 §6.1). */
  readonly codec: WebRtcCodec;
  readonly codecPt: number;
  /** telephone-event at the codec's clock rate, or null. */
  readonly eventPt: number | null;
  /**
   * Every telephone-event payload type of the section: Chrome sends its RFC 4733 events at 8 kHz
   * (its `telephone-event/8000` type) even while Opus at 48 kHz carries the audio.
   */
  readonly eventPts?: readonly number[];
  /** Every audio payload type of the section we can decode. */
  readonly decodable: ReadonlyMap<number, WebRtcCodec>;
  readonly direction: 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';
}

/** Reads the answer's audio section; null when it has no codec of ours. */
export function negotiatedMedia(answer: string): WebRtcMedia | null {
  let parsed: sdpTransform.SessionDescription;
  try {
    parsed = sdpTransform.parse(answer);
  } catch {
    return null;
  }
  const audio = (parsed.media ?? []).find((m) => m.type === 'audio' && m.port !== 0);
  if (!audio) return null;
  const rtp = new Map((audio.rtp ?? []).map((r) => [r.payload, r]));
  const decodable = new Map<number, WebRtcCodec>();
  const events: { pt: number; rate: number }[] = [];
  let chosen: { codec: WebRtcCodec; pt: number; rate: number } | null = null;
  for (const pt of String(audio.payloads ?? '')
    .trim()
    .split(/\s+/)
    .map(Number)) {
    const r = rtp.get(pt);
    const name = r?.codec.toLowerCase() ?? (pt === 0 ? 'pcmu' : pt === 8 ? 'pcma' : '');
    const rate = r?.rate ?? 8000;
    const codec: WebRtcCodec | null =
      name === 'opus' && rate === 48000 ? 'opus' : name === 'pcmu' ? 'PCMU' : name === 'pcma' ? 'PCMA' : null;
    if (name === 'telephone-event') events.push({ pt, rate });
    if (!codec) continue;
    decodable.set(pt, codec);
    chosen ??= { codec, pt, rate };
  }
  if (!chosen) return null;
  const rate = chosen.rate;
  return {
    codec: chosen.codec,
    codecPt: chosen.pt,
    eventPt: events.find((e) => e.rate === rate)?.pt ?? null,
    eventPts: events.map((e) => e.pt),
    decodable,
    direction: (audio.direction ?? parsed.direction ?? 'sendrecv') as WebRtcMedia['direction'],
  };
}
