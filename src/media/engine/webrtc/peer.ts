/**
 * werift's RTCPeerConnection as the engine's WebRTC transport: ICE-lite (host candidates only, the
 * browser runs full ICE and nominates), DTLS passive when answering, rtcp-mux and BUNDLE on one
 * socket bound to RTP_HOST. werift is imported here and nowhere else in the engine.
 */
import { RTCPeerConnection, RTCRtpCodecParameters, type RTCRtpTransceiver, RtpHeader } from 'werift';
import type { Codec } from '../../port.js';
import type { WebRtcCodecName } from '../../settings.js';
import type { RtpPacket as Packet } from '../rtp.js';
import { finishCandidates, makePassive, narrowbandOpus, negotiatedMedia, type WebRtcMedia } from './sdp.js';
import { SrtpPath } from './srtp-path.js';
import type { SrtpLink } from './webrtc-endpoint.js';

/** How long ICE gathering (host candidates only) may take before we answer anyway. */
const GATHER_TIMEOUT_MS = 3000;

/** buildRtp's header: no CSRC list, no extension. */
const RTP_HEADER_BYTES = 12;

/** Payload types we offer; an answer to a browser's offer uses the browser's numbers. */
const OPUS_PT = 111;
const EVENT_48K_PT = 110;
const EVENT_8K_PT = 101;

/** Our codecs in preference order (`WEBRTC_CODECS`, restricted to the allowed G.711 laws), then telephone-event. */
function codecList(order: readonly WebRtcCodecName[], allowed: readonly Codec[]): RTCRtpCodecParameters[] {
  const list: RTCRtpCodecParameters[] = [];
  for (const name of order) {
    if (name === 'opus') {
      list.push(
        new RTCRtpCodecParameters({
          mimeType: 'audio/opus',
          clockRate: 48000,
          channels: 2,
          payloadType: OPUS_PT,
          parameters: 'minptime=10;useinbandfec=1',
        }),
      );
    } else if (allowed.includes(name)) {
      list.push(
        new RTCRtpCodecParameters({
          mimeType: `audio/${name}`,
          clockRate: 8000,
          payloadType: name === 'PCMU' ? 0 : 8,
        }),
      );
    }
  }
  list.push(
    new RTCRtpCodecParameters({
      mimeType: 'audio/telephone-event',
      clockRate: 48000,
      payloadType: EVENT_48K_PT,
      parameters: '0-16',
    }),
    new RTCRtpCodecParameters({
      mimeType: 'audio/telephone-event',
      clockRate: 8000,
      payloadType: EVENT_8K_PT,
      parameters: '0-16',
    }),
  );
  return list;
}

/** Where and how the peer connection binds and advertises. */
export interface PeerOptions {
  readonly host: string;
  /** A port known free (the engine just probed it); werift binds it. */
  readonly port: number;
  readonly publicAddresses: readonly string[];
  readonly codecs: readonly Codec[];
  /** Preference order (WEBRTC_CODECS). */
  readonly order: readonly WebRtcCodecName[];
}

/** One browser leg's transport; `onRtp` receives decrypted RTP. */
export class WebRtcPeer implements SrtpLink {
  private readonly pc: RTCPeerConnection;
  private transceiver: RTCRtpTransceiver | null = null;
  private closed = false;
  /** RTP's short path once DTLS is up (`srtp-path.ts`); null: werift's own path. */
  private path: SrtpPath | null = null;
  /** Reused for every outgoing packet on werift's path (see `send`). */
  private readonly header = new RtpHeader();
  onRtp: (pkt: Packet) => void = () => {};
  onState: (state: string) => void = () => {};
  /** Our local description's port (the ICE socket). */
  port = 0;

  constructor(private readonly opts: PeerOptions) {
    this.pc = new RTCPeerConnection({
      iceLite: true,
      // No STUN/TURN servers: ICE-lite advertises host candidates only. werift's default lists a
      // public STUN server, whose DNS look-up per leg runs on libuv's small thread pool.
      iceServers: [],
      codecs: { audio: codecList(opts.order, opts.codecs) },
      headerExtensions: { audio: [] },
      // Exactly one host candidate, on the bound address: werift's own interface scan is off
      // (it skips loopback and would list addresses the socket is not bound to).
      iceUseIpv4: false,
      iceUseIpv6: false,
      iceAdditionalHostAddresses: opts.host === '0.0.0.0' ? undefined : [opts.host],
      iceUseTcp: false,
      // werift needs a range; the second port is only a fallback if the first was taken meanwhile.
      icePortRange: [opts.port, opts.port + 1],
      iceInterfaceAddresses: opts.host === '0.0.0.0' ? undefined : { udp4: opts.host },
      bundlePolicy: 'max-bundle',
    });
    this.pc.connectionStateChange.subscribe((s) => {
      if (s === 'connected') this.takePath();
      this.onState(s);
    });
    this.pc.onTransceiverAdded.subscribe((t) => this.attach(t));
  }

  private attach(t: RTCRtpTransceiver): void {
    if (t.kind !== 'audio' || this.transceiver) return;
    this.transceiver = t;
    // werift's path: RTP before the short path is in place, or all of it when it cannot be.
    t.onTrack.subscribe((track) => {
      track.onReceiveRtp.subscribe((rtp) => {
        if (this.closed) return;
        const h = rtp.header;
        this.onRtp({
          marker: h.marker,
          payloadType: h.payloadType,
          sequence: h.sequenceNumber,
          timestamp: h.timestamp,
          ssrc: h.ssrc,
          payload: rtp.payload,
        });
      });
    });
  }

  /** Puts RTP on the short path, keyed by the DTLS transport's current SRTP session. */
  private takePath(): void {
    const dtls = this.transceiver?.dtlsTransport;
    if (this.closed || !dtls || this.path?.keyedBy === dtls.srtp) return;
    this.path?.detach();
    this.path = SrtpPath.attach(dtls, (pkt) => {
      if (!this.closed) this.onRtp(pkt);
    });
  }

  /** Answers a browser's offer; resolves with our answer and what it settled on. */
  async answer(offer: string): Promise<{ sdp: string; media: WebRtcMedia } | { error: string }> {
    await this.pc.setRemoteDescription({ type: 'offer', sdp: offer });
    const t = this.pc.getTransceivers().find((x) => x.kind === 'audio');
    if (!t) return { error: 'no audio section in the offer' };
    this.attach(t);
    t.setDirection('sendrecv');
    const answer = await this.pc.createAnswer();
    await this.pc.setLocalDescription({ type: 'answer', sdp: makePassive(answer.sdp) });
    const sdp = await this.localSdp();
    const media = negotiatedMedia(sdp);
    if (!media) return { error: `no common codec (we take ${this.opts.order.join(', ')})` };
    return { sdp, media };
  }

  /** Makes an offer for a browser (which answers as full ICE agent, DTLS active). */
  async offer(): Promise<string> {
    this.attach(this.pc.addTransceiver('audio', { direction: 'sendrecv' }));
    await this.pc.setLocalDescription(await this.pc.createOffer());
    return this.localSdp();
  }

  /** Applies the browser's answer to our offer. */
  async applyAnswer(answer: string): Promise<WebRtcMedia | { error: string }> {
    await this.pc.setRemoteDescription({ type: 'answer', sdp: answer });
    return negotiatedMedia(answer) ?? { error: 'no common codec in the answer' };
  }

  private async localSdp(): Promise<string> {
    if (this.pc.iceGatheringState !== 'complete') {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, GATHER_TIMEOUT_MS);
        this.pc.iceGatheringStateChange.subscribe((s) => {
          if (s !== 'complete') return;
          clearTimeout(timer);
          resolve();
        });
      });
    }
    const finished = finishCandidates(this.pc.localDescription?.sdp ?? '', {
      host: this.opts.host,
      publicAddresses: this.opts.publicAddresses,
    });
    this.port = finished.port;
    return narrowbandOpus(finished.sdp);
  }

  /** True while RTP takes the short path (`srtp-path.ts`) rather than werift's. */
  get shortPath(): boolean {
    return this.path !== null;
  }

  get connected(): boolean {
    const dtls = this.transceiver?.dtlsTransport;
    return !this.closed && dtls !== undefined && dtls.state === 'connected';
  }

  send(packet: Buffer): void {
    const dtls = this.transceiver?.dtlsTransport;
    if (!dtls || this.closed) return;
    if (this.path) {
      // The SSRC our SDP declares (a=ssrc): the far end routes bundled RTP by it.
      this.path.send(packet, this.transceiver!.sender.ssrc);
      return;
    }
    // The endpoint built this packet (buildRtp: fixed 12-byte header, no CSRC, no extension), so
    // its fields are read in place into one reused header rather than parsed into a new RtpPacket
    // per frame. werift serializes the header synchronously inside sendRtp, before any await.
    if (packet.length < RTP_HEADER_BYTES) return;
    const h = this.header;
    h.marker = (packet[1]! & 0x80) !== 0;
    h.payloadType = packet[1]! & 0x7f;
    h.sequenceNumber = packet.readUInt16BE(2);
    h.timestamp = packet.readUInt32BE(4);
    // The SSRC our SDP declares (a=ssrc): the far end routes bundled RTP by it.
    h.ssrc = this.transceiver!.sender.ssrc;
    dtls.sendRtp(packet.subarray(RTP_HEADER_BYTES), h).catch(() => {
      // Best effort, as RTP over UDP is.
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.path?.detach();
    this.path = null;
    this.pc.close().catch(() => {});
  }
}
