/**
 * Creating endpoints and negotiating their SDP (RFC 3264 offer/answer): an RTP port pair from the
 * configured range, an answer to the caller's offer or an offer of our own, and re-negotiation on
 * a new offer. WebRTC endpoints (webrtc/) go through the same bookkeeping and events. A release
 * that arrives while the socket is still being bound ends the creation once the bind completes.
 */
import { createSocket, type Socket } from 'node:dgram';
import type { Logger } from 'pino';
import { literalLookup } from '../../udp-lookup.js';
import type { EngineSettings } from '../ipc.js';
import type { Codec, MediaEvent } from '../port.js';
import type { Connections } from './connections.js';
import { MEDIA } from './constants.js';
import { Endpoint } from './endpoint.js';
import type { EngineContext } from './engine-context.js';
import { CODEC_PT } from './g711.js';
import type { Operations } from './operations.js';
import { answerDirection, buildSdp, negotiate } from './sdp.js';
import { applyWebRtcSdp, openWebRtcEndpoint } from './webrtc/open.js';
import { isWebRtcSdp } from './webrtc/sdp.js';
import { WebRtcEndpoint } from './webrtc/webrtc-endpoint.js';

const ALL_CODECS: readonly Codec[] = ['PCMU', 'PCMA'];

/** Endpoint creation and SDP (see the file header). */
export class EndpointSetup {
  private readonly endpoints: Map<string, Endpoint>;
  private readonly settings: EngineSettings;
  private readonly logger: Logger;
  private readonly emit: (event: MediaEvent) => void;
  private readonly creating = new Set<string>();
  /** Released while their socket was still being bound: closed as soon as the bind completes. */
  private readonly cancelled = new Set<string>();
  private nextPort: number;

  constructor(
    cx: EngineContext,
    private readonly ops: Operations,
    private readonly connections: Connections,
  ) {
    this.endpoints = cx.endpoints;
    this.settings = cx.settings;
    this.logger = cx.logger;
    this.emit = cx.emit;
    this.nextPort = this.settings.rtpPortMin + (this.settings.rtpPortMin % 2);
  }

  /**
   * A release of an endpoint still being created: true when it is, and its creation then ends with
   * `media.released` instead of `media.endpointReady`.
   */
  cancel(id: string): boolean {
    if (!this.creating.has(id)) return false;
    this.cancelled.add(id);
    return true;
  }

  private failNoPort(id: string): void {
    this.emit({
      type: 'media.endpointFailed',
      endpointId: id,
      reason: 'no-port',
      message: `no free RTP port in ${this.settings.rtpPortMin}-${this.settings.rtpPortMax}`,
    });
  }

  private async bindPort(): Promise<{ socket: Socket; port: number } | null> {
    const { rtpPortMin: min, rtpPortMax: max, rtpHost } = this.settings;
    const slots = Math.max(1, Math.floor((max - min) / 2) + 1);
    for (let i = 0; i < slots; i++) {
      const port = this.nextPort;
      this.nextPort += 2;
      if (this.nextPort > max) this.nextPort = min + (min % 2);
      if (port > max) continue;
      const socket = createSocket({ type: 'udp4', lookup: literalLookup });
      const ok = await new Promise<boolean>((resolve) => {
        socket.once('error', () => resolve(false));
        socket.bind(port, rtpHost, () => resolve(true));
      });
      if (ok) {
        socket.removeAllListeners('error');
        return { socket, port };
      }
      socket.close();
    }
    return null;
  }

  async create(
    id: string,
    remoteSdp: string | undefined,
    codecs: readonly Codec[] | undefined,
    webrtc: boolean,
  ) {
    if (this.endpoints.has(id) || this.creating.has(id)) {
      this.emit({
        type: 'media.endpointFailed',
        endpointId: id,
        reason: 'exists',
        message: `endpoint ${id} exists`,
      });
      return;
    }
    const allowed = codecs && codecs.length > 0 ? codecs.filter((c) => ALL_CODECS.includes(c)) : ALL_CODECS;
    if (webrtc || (remoteSdp !== undefined && isWebRtcSdp(remoteSdp))) {
      await this.createWebRtc(id, remoteSdp, allowed);
      return;
    }
    let negotiated: ReturnType<typeof negotiate> | null = null;
    if (remoteSdp !== undefined) {
      negotiated = negotiate(remoteSdp, allowed);
      if (!negotiated.ok) {
        this.emit({
          type: 'media.endpointFailed',
          endpointId: id,
          reason: negotiated.reason,
          message: negotiated.message,
        });
        return;
      }
    }
    this.creating.add(id);
    const bound = await this.bindPort();
    this.creating.delete(id);
    if (this.cancelled.delete(id)) {
      bound?.socket.close();
      this.emit({ type: 'media.released', endpointId: id });
      return;
    }
    if (!bound) {
      this.failNoPort(id);
      return;
    }
    const ep = new Endpoint(
      id,
      bound.socket,
      this.settings.rtpHost,
      bound.port,
      allowed,
      (e, d) => this.ops.onDigit(e, d),
      (e, pkt) => this.connections.relayEvent(e, pkt),
    );
    this.endpoints.set(id, ep);
    if (negotiated?.ok) {
      ep.setRemote(negotiated.remote);
      ep.localSdp = this.answerSdp(ep);
    } else {
      ep.offered = true;
      ep.localSdp = buildSdp({
        address: ep.address,
        port: ep.port,
        sessionId: ep.sessionId,
        version: ep.sdpVersion,
        codecs: allowed.map((c) => ({ codec: c, pt: CODEC_PT[c] })),
        eventPt: MEDIA.TELEPHONE_EVENT_PT,
        direction: 'sendrecv',
      });
    }
    this.logger.debug({ endpointId: id, port: ep.port }, 'endpoint created');
    this.emit({
      type: 'media.endpointReady',
      endpoint: { endpointId: id, address: ep.address, port: ep.port, sdp: ep.localSdp },
    });
  }

  /** The WebRTC seam: same bookkeeping and events as `create`, transport from webrtc/. */
  private async createWebRtc(id: string, remoteSdp: string | undefined, allowed: readonly Codec[]) {
    this.creating.add(id);
    const probe = await this.bindPort();
    if (probe) await new Promise<void>((resolve) => probe.socket.close(() => resolve()));
    const opened = probe
      ? await openWebRtcEndpoint({
          id,
          host: this.settings.rtpHost,
          port: probe.port,
          publicAddresses: this.settings.webrtcPublicAddresses ?? [],
          codecs: allowed,
          order: this.settings.webrtcCodecs ?? ['opus', 'PCMU', 'PCMA'],
          remoteSdp,
          onDigit: (e, d) => this.ops.onDigit(e, d),
          onEvent: (e, pkt) => this.connections.relayEvent(e, pkt),
          onState: (e, state) => this.logger.debug({ endpointId: e.id, state }, 'webrtc connection state'),
        })
      : null;
    this.creating.delete(id);
    if (this.cancelled.delete(id)) {
      if (opened?.ok) opened.ep.close();
      this.emit({ type: 'media.released', endpointId: id });
      return;
    }
    if (!opened) {
      this.failNoPort(id);
      return;
    }
    if (!opened.ok) {
      this.emit({
        type: 'media.endpointFailed',
        endpointId: id,
        reason: opened.reason,
        message: opened.message,
      });
      return;
    }
    const ep = opened.ep;
    this.endpoints.set(id, ep);
    this.logger.debug({ endpointId: id, port: ep.port }, 'webrtc endpoint created');
    this.emit({
      type: 'media.endpointReady',
      endpoint: { endpointId: id, address: ep.address, port: ep.port, sdp: ep.localSdp },
    });
  }

  private async applyWebRtc(ep: WebRtcEndpoint, sdp: string): Promise<void> {
    const r = await applyWebRtcSdp(ep, sdp);
    if (this.endpoints.get(ep.id) !== ep) return;
    if (!r.ok) {
      this.emit({ type: 'media.endpointFailed', endpointId: ep.id, reason: r.reason, message: r.message });
      return;
    }
    this.emit({ type: 'media.sdpApplied', endpointId: ep.id, sdp: ep.localSdp, codec: r.codec });
  }

  private answerSdp(ep: Endpoint): string {
    const r = ep.remote!;
    return buildSdp({
      address: ep.address,
      port: ep.port,
      sessionId: ep.sessionId,
      version: ep.sdpVersion,
      codecs: [{ codec: r.codec, pt: r.codecPt }],
      eventPt: r.eventPt,
      direction: answerDirection(r.direction),
    });
  }

  applySdp(id: string, sdp: string): void {
    const ep = this.endpoints.get(id);
    if (!ep) {
      this.emit({
        type: 'media.endpointFailed',
        endpointId: id,
        reason: 'no-such-endpoint',
        message: `no endpoint ${id}`,
      });
      return;
    }
    if (ep instanceof WebRtcEndpoint) {
      void this.applyWebRtc(ep, sdp);
      return;
    }
    const n = negotiate(sdp, ep.codecs);
    if (!n.ok) {
      this.emit({ type: 'media.endpointFailed', endpointId: id, reason: n.reason, message: n.message });
      return;
    }
    ep.setRemote(n.remote);
    if (ep.offered) {
      // The answer to our offer: our SDP stands (RFC 3264 §6).
      ep.offered = false;
    } else {
      // A new offer (re-INVITE): answer it with a new version.
      ep.sdpVersion++;
      ep.localSdp = this.answerSdp(ep);
    }
    this.emit({ type: 'media.sdpApplied', endpointId: id, sdp: ep.localSdp, codec: n.remote.codec });
  }
}
