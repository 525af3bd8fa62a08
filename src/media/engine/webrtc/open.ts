/**
 * Opening a WebRTC endpoint and applying later descriptions: the glue between the engine's
 * create/applySdp commands and the werift peer. Outcomes are values, never throws.
 */
import type { Codec } from '../../port.js';
import type { WebRtcCodecName } from '../../settings.js';
import type { Endpoint } from '../endpoint.js';
import type { RtpPacket } from '../rtp.js';
import { WebRtcPeer } from './peer.js';
import type { WebRtcCodec } from './sdp.js';
import { WebRtcEndpoint } from './webrtc-endpoint.js';

export interface OpenArgs {
  readonly id: string;
  readonly host: string;
  readonly port: number;
  readonly publicAddresses: readonly string[];
  readonly codecs: readonly Codec[];
  /** Preference order (WEBRTC_CODECS). */
  readonly order: readonly WebRtcCodecName[];
  /** The browser's offer; absent: we make the offer. */
  readonly remoteSdp?: string;
  readonly onDigit: (ep: Endpoint, digit: string) => void;
  readonly onEvent: (ep: Endpoint, pkt: RtpPacket) => void;
  readonly onState: (ep: WebRtcEndpoint, state: string) => void;
}

export type Failure = {
  readonly ok: false;
  readonly reason: 'bad-sdp' | 'no-common-codec';
  readonly message: string;
};

export async function openWebRtcEndpoint(
  a: OpenArgs,
): Promise<{ readonly ok: true; readonly ep: WebRtcEndpoint } | Failure> {
  const peer = new WebRtcPeer({
    host: a.host,
    port: a.port,
    publicAddresses: a.publicAddresses,
    codecs: a.codecs,
    order: a.order,
  });
  try {
    let sdp: string;
    let media = null;
    if (a.remoteSdp !== undefined) {
      const r = await peer.answer(a.remoteSdp);
      if ('error' in r) {
        peer.close();
        return { ok: false, reason: 'no-common-codec', message: r.error };
      }
      sdp = r.sdp;
      media = r.media;
    } else {
      sdp = await peer.offer();
    }
    const ep = new WebRtcEndpoint(
      a.id,
      a.publicAddresses[0] ?? a.host,
      peer.port,
      a.codecs,
      a.onDigit,
      a.onEvent,
    );
    ep.peer = peer;
    ep.link = peer;
    ep.localSdp = sdp;
    if (media) ep.setMedia(media);
    else ep.offered = true;
    peer.onRtp = (pkt) => ep.receiveSrtp(pkt);
    peer.onState = (state) => a.onState(ep, state);
    return { ok: true, ep };
  } catch (err) {
    peer.close();
    return { ok: false, reason: 'bad-sdp', message: `WebRTC description refused: ${(err as Error).message}` };
  }
}

/** Applies the browser's answer to our offer, or a new offer from it (renegotiation). */
export async function applyWebRtcSdp(
  ep: WebRtcEndpoint,
  sdp: string,
): Promise<{ readonly ok: true; readonly codec: WebRtcCodec } | Failure> {
  const peer = ep.peer;
  if (!peer) return { ok: false, reason: 'bad-sdp', message: 'endpoint closed' };
  try {
    if (ep.offered) {
      const media = await peer.applyAnswer(sdp);
      if ('error' in media) return { ok: false, reason: 'no-common-codec', message: media.error };
      ep.setMedia(media);
      ep.offered = false;
      return { ok: true, codec: media.codec };
    }
    const r = await peer.answer(sdp);
    if ('error' in r) return { ok: false, reason: 'no-common-codec', message: r.error };
    ep.localSdp = r.sdp;
    ep.setMedia(r.media);
    return { ok: true, codec: r.media.codec };
  } catch (err) {
    return { ok: false, reason: 'bad-sdp', message: `WebRTC description refused: ${(err as Error).message}` };
  }
}
