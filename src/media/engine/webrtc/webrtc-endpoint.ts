/**
 * A WebRTC endpoint: the same Endpoint (FIFO, DTMF, send side, counters) with werift's ICE-lite,
 * DTLS-SRTP and rtcp-mux underneath and Opus or G.711 as the codec. Once DTLS is up, decoded
 * 8 kHz PCM enters the endpoint's FIFO exactly as a plain RTP endpoint's does, so play, record,
 * collect, bridge and conference work unchanged.
 */
import type { Codec } from '../../port.js';
import { MEDIA } from '../constants.js';
import { Endpoint } from '../endpoint.js';
import { CODEC_PT, decodeG711, encodeG711 } from '../g711.js';
import type { RtpPacket } from '../rtp.js';
import type { PromptFrameRef } from '../running-ops.js';
import { OpusCodec } from './opus.js';
import type { WebRtcPeer } from './peer.js';
import { promptFrames } from './prompt-frames.js';
import type { WebRtcCodec, WebRtcMedia } from './sdp.js';

/** The part of werift's transport the endpoint uses (kept narrow so the engine can be tested). */
export interface SrtpLink {
  /** True once DTLS has keyed SRTP. */
  readonly connected: boolean;
  /** Protects and sends one RTP packet (built by the endpoint). */
  send(packet: Buffer): void;
  close(): void;
}

/** Opus RTP clock (RFC 7587 §4.1): 960 units per 20 ms. */
const OPUS_TS_PER_TICK = 960;

export class WebRtcEndpoint extends Endpoint {
  media: WebRtcMedia | null = null;
  link: SrtpLink | null = null;
  /** The peer connection, for later descriptions (null once closed). */
  peer: WebRtcPeer | null = null;
  private readonly opus = new OpusCodec();
  private readonly g711Out = new Uint8Array(MEDIA.FRAME_SAMPLES);
  private readonly g711In = new Int16Array(2048);

  constructor(
    id: string,
    address: string,
    port: number,
    codecs: readonly Codec[],
    onDigit: (ep: Endpoint, digit: string) => void,
    onEvent: (ep: Endpoint, pkt: RtpPacket) => void,
  ) {
    super(id, null, address, port, codecs, onDigit, onEvent);
  }

  /** Applies what the offer/answer settled on. */
  setMedia(media: WebRtcMedia): void {
    this.media = media;
    this.tsPerTick = media.codec === 'opus' ? OPUS_TS_PER_TICK : MEDIA.FRAME_SAMPLES;
    // The base class reads the event payload type and direction from `remote`; the transport
    // address is ICE's business, so the plain-RTP fields stay empty.
    this.setRemote({
      address: this.address,
      port: this.port,
      codec: media.codec === 'PCMA' ? 'PCMA' : 'PCMU',
      codecPt: media.codecPt,
      eventPt: media.eventPt,
      direction: media.direction,
    });
  }

  /** An SRTP-decrypted packet from the browser. */
  receiveSrtp(pkt: RtpPacket): void {
    const m = this.media;
    // An event on another telephone-event type of the section (see WebRtcMedia.eventPts) is
    // still a key press: it counts as the negotiated one.
    if (m && m.eventPt !== null && pkt.payloadType !== m.eventPt && m.eventPts?.includes(pkt.payloadType))
      this.accept({ ...pkt, payloadType: m.eventPt });
    else this.accept(pkt);
  }

  protected override audioCodecOf(pt: number): string | null {
    return this.media?.decodable.get(pt) ?? null;
  }

  protected override decode(codec: string, payload: Uint8Array): Int16Array {
    if (codec === 'opus') return this.opus.decode(payload);
    const n = Math.min(payload.length, this.g711In.length);
    return decodeG711(codec as Codec, payload.subarray(0, n), this.g711In.subarray(0, n));
  }

  protected override encode(
    pcm: Int16Array,
    prompt?: PromptFrameRef,
  ): { readonly pt: number; readonly payload: Uint8Array } {
    const m = this.media!;
    if (m.codec === 'opus') {
      // A prompt's frame is encoded once for every leg playing it (prompt-frames.ts).
      const shared = prompt ? promptFrames(prompt.pcm)?.frame(prompt.index) : null;
      return { pt: m.codecPt, payload: shared ?? this.opus.encode(pcm) };
    }
    encodeG711(m.codec as Codec, pcm, this.g711Out);
    return { pt: m.codecPt ?? CODEC_PT[m.codec as Codec], payload: this.g711Out };
  }

  /** Silence through the encoder too: Opus carries state from frame to frame. */
  protected override encodeSilence(silence: Int16Array): {
    readonly pt: number;
    readonly payload: Uint8Array;
  } {
    return this.encode(silence);
  }

  protected override canSend(): boolean {
    const d = this.media?.direction;
    return this.link?.connected === true && (d === 'sendrecv' || d === 'recvonly');
  }

  protected override transmit(packet: Buffer): void {
    this.link?.send(packet);
  }

  /** The codec on the wire, for `media.sdpApplied`. */
  get wireCodec(): WebRtcCodec | null {
    return this.media?.codec ?? null;
  }

  override close(): void {
    this.link?.close();
    this.link = null;
    this.peer = null;
    this.opus.close();
  }
}
