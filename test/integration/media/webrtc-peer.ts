/**
 * A WebRTC "browser" for engine tests: werift's RTCPeerConnection as a full ICE agent on loopback,
 * offering Opus, PCMU and telephone-event like Chrome does, sending Opus (48 kHz) and RFC 4733
 * events over SRTP, and keeping what it receives, decrypted.
 */
import { RTCPeerConnection, RTCRtpCodecParameters, type RTCRtpTransceiver, RtpHeader } from 'werift';
import { buildTelephoneEvent, digitToEvent } from '../../../src/media/engine/dtmf.js';
import { OpusCodec } from '../../../src/media/engine/webrtc/opus.js';

const OPUS_PT = 111;
const EVENT_PT = 110;

export interface Received {
  readonly pt: number;
  readonly payload: Buffer;
}

export class BrowserPeer {
  readonly pc = new RTCPeerConnection({
    codecs: {
      audio: [
        new RTCRtpCodecParameters({
          mimeType: 'audio/opus',
          clockRate: 48000,
          channels: 2,
          payloadType: OPUS_PT,
        }),
        new RTCRtpCodecParameters({ mimeType: 'audio/PCMU', clockRate: 8000, payloadType: 0 }),
        new RTCRtpCodecParameters({
          mimeType: 'audio/telephone-event',
          clockRate: 48000,
          payloadType: EVENT_PT,
        }),
        new RTCRtpCodecParameters({ mimeType: 'audio/telephone-event', clockRate: 8000, payloadType: 126 }),
      ],
    },
    headerExtensions: { audio: [] },
    // Loopback only: no public STUN server to look up.
    iceServers: [],
    iceUseIpv6: false,
    iceInterfaceAddresses: { udp4: '127.0.0.1' },
  });
  readonly received: Received[] = [];
  private transceiver: RTCRtpTransceiver | null = null;
  /** A browser encodes 48 kHz audio; we listen at the engine's 8 kHz. */
  private readonly encoder = new OpusCodec(48000);
  private readonly decoder = new OpusCodec();
  private seq = 100;
  private ts = 48_000;
  private timer: NodeJS.Timeout | null = null;

  constructor() {
    // onTrack fires inside setRemoteDescription: subscribe before it.
    this.pc.onTransceiverAdded.subscribe((t) => this.watch(t));
  }

  private watch(t: RTCRtpTransceiver): void {
    if (this.transceiver) return;
    this.transceiver = t;
    t.onTrack.subscribe((track) =>
      track.onReceiveRtp.subscribe((rtp) =>
        this.received.push({ pt: rtp.header.payloadType, payload: Buffer.from(rtp.payload) }),
      ),
    );
  }

  /** Our offer (a browser calling in). */
  async offer(): Promise<string> {
    this.watch(this.pc.addTransceiver('audio', { direction: 'sendrecv' }));
    await this.pc.setLocalDescription(await this.pc.createOffer());
    await this.gathered();
    return this.pc.localDescription!.sdp;
  }

  async acceptAnswer(sdp: string): Promise<void> {
    await this.pc.setRemoteDescription({ type: 'answer', sdp });
  }

  /** Answers the engine's offer (a call to the browser). */
  async answer(offer: string): Promise<string> {
    await this.pc.setRemoteDescription({ type: 'offer', sdp: offer });
    const t = this.pc.getTransceivers().find((x) => x.kind === 'audio')!;
    this.watch(t);
    t.setDirection('sendrecv');
    await this.pc.setLocalDescription(await this.pc.createAnswer());
    await this.gathered();
    return this.pc.localDescription!.sdp;
  }

  private async gathered(): Promise<void> {
    if (this.pc.iceGatheringState === 'complete') return;
    await new Promise<void>((resolve) =>
      this.pc.iceGatheringStateChange.subscribe((s) => {
        if (s === 'complete') resolve();
      }),
    );
  }

  /** Resolves once DTLS is up (rejects after `timeoutMs`). */
  connected(timeoutMs = 10_000): Promise<void> {
    if (this.pc.connectionState === 'connected') return Promise.resolve();
    return new Promise((resolve, reject) => {
      const seen: string[] = [];
      const fail = (why: string): void =>
        reject(
          new Error(
            `WebRTC peer ${why} (states ${seen.join(' ')}; ICE ${this.pc.iceConnectionState}, DTLS ${this.transceiver?.dtlsTransport.state})`,
          ),
        );
      const timer = setTimeout(() => fail('did not connect'), timeoutMs);
      this.pc.connectionStateChange.subscribe((s) => {
        seen.push(s);
        if (s === 'connected') {
          clearTimeout(timer);
          resolve();
        } else if (s === 'failed') {
          clearTimeout(timer);
          fail('failed');
        }
      });
    });
  }

  private sendRtp(pt: number, payload: Buffer, ts: number, marker = false): void {
    const header = new RtpHeader({
      payloadType: pt,
      sequenceNumber: this.seq,
      timestamp: ts >>> 0,
      ssrc: this.transceiver!.sender.ssrc,
      marker,
    });
    this.seq = (this.seq + 1) & 0xffff;
    void this.transceiver!.dtlsTransport.sendRtp(payload, header);
  }

  /** Streams `pcm48k` as 20 ms Opus packets, looped, until `stop`. */
  stream(pcm48k: Int16Array): void {
    this.stop();
    let pos = 0;
    const frame = new Int16Array(960);
    this.timer = setInterval(() => {
      for (let i = 0; i < 960; i++) frame[i] = pcm48k[(pos + i) % pcm48k.length]!;
      pos = (pos + 960) % pcm48k.length;
      this.sendRtp(OPUS_PT, Buffer.from(this.encoder.encode(frame)), this.ts);
      this.ts += 960;
    }, 20);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One RFC 4733 digit at 48 kHz: start, updates, and the end packet three times. */
  sendDigit(digit: string): void {
    const event = digitToEvent(digit)!;
    const ts = this.ts;
    this.ts += 960 * 6;
    const durations = [960, 1920, 2880, 3840];
    durations.forEach((d, i) => {
      this.sendRtp(EVENT_PT, Buffer.from(buildTelephoneEvent(event, false, d)), ts, i === 0);
    });
    for (let i = 0; i < 3; i++)
      this.sendRtp(EVENT_PT, Buffer.from(buildTelephoneEvent(event, true, 4800)), ts);
  }

  /** Opus audio received so far, decoded to 8 kHz. */
  decodedOpus(from = 0): Int16Array {
    const parts: Int16Array[] = [];
    for (const r of this.received.slice(from)) {
      if (r.pt !== OPUS_PT) continue;
      parts.push(Int16Array.from(this.decoder.decode(r.payload)));
    }
    const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
    let o = 0;
    for (const p of parts) {
      out.set(p, o);
      o += p.length;
    }
    return out;
  }

  async close(): Promise<void> {
    this.stop();
    this.encoder.close();
    this.decoder.close();
    await this.pc.close();
  }
}

/** A sine at 48 kHz (what a browser's microphone would give). */
export function tone48k(hz: number, ms: number, amplitude = 8000): Int16Array {
  const n = Math.round((48000 * ms) / 1000);
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / 48000));
  return out;
}
