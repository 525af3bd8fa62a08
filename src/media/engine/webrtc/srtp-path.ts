/**
 * RTP's short path through a werift transport, once DTLS has keyed SRTP. werift hands each
 * datagram through its ICE connection, DTLS transport, RTP router and receiver (a STUN parse
 * attempt, several events, header objects and statistics per packet) and builds a cipher per
 * packet; at 50 packets a second each way per leg that was most of a WebRTC leg's cost.
 *
 * Inbound: the UDP transport under the nominated ICE pair gets a front handler. An RTP datagram
 * (RFC 7983 first byte 128–191, not an RTCP packet type) that authenticates under our SRTP keys is
 * decrypted in place and handed to `onRtp`; everything else (STUN, DTLS, RTCP, a packet that does
 * not authenticate, e.g. after a DTLS restart) goes on to werift as before.
 * Outbound: `SrtpCrypto` protects the endpoint's packet, sent to werift's nominated pair (see
 * `route`).
 */
import { isIP } from 'node:net';
import type { RTCDtlsTransport } from 'werift';
import { parseRtp, type RtpPacket } from '../rtp.js';
import { type SrtpConfig, SrtpCrypto } from './srtp.js';

type Address = readonly [string, number];

/** What the path needs of werift's UDP transport (`UdpTransport` in werift's ICE package). */
interface UdpFront {
  onData: (data: Buffer, addr: Address) => void;
  readonly socket: { send(data: Buffer, port: number, address: string): void };
}

function isUdpFront(t: unknown): t is UdpFront {
  if (typeof t !== 'object' || t === null) return false;
  const u = t as { onData?: unknown; socket?: { send?: unknown } };
  return typeof u.onData === 'function' && typeof u.socket?.send === 'function';
}

type Pair = NonNullable<RTCDtlsTransport['iceTransport']['connection']['nominated']>;

export class SrtpPath {
  private closed = false;
  /** The nominated pair `direct` was worked out for. */
  private routedFor: Pair | undefined;
  /** Where to send straight from the socket; null: through werift's ICE connection. */
  private direct: { readonly host: string; readonly port: number } | null = null;

  private constructor(
    private readonly dtls: RTCDtlsTransport,
    /** The SRTP session it was keyed from: a new one (DTLS restarted) means new keys. */
    readonly keyedBy: object,
    private readonly crypto: SrtpCrypto,
    private readonly udp: UdpFront,
    /** The ICE protocol (socket) `udp` belongs to. */
    private readonly protocol: object,
    private readonly inner: UdpFront['onData'],
    private readonly onRtp: (pkt: RtpPacket) => void,
  ) {}

  /**
   * Takes over RTP on a connected DTLS transport; null when werift's internals are not as
   * expected (another werift version, a TCP pair) or the profile is not ours: werift's own path
   * then stays in use.
   */
  static attach(dtls: RTCDtlsTransport, onRtp: (pkt: RtpPacket) => void): SrtpPath | null {
    const session = dtls.srtp as { config?: SrtpConfig } | undefined;
    const config = session?.config;
    const pair = dtls.iceTransport.connection.nominated;
    const udp = (pair?.protocol as { transport?: unknown } | undefined)?.transport;
    if (!session || !config || !pair || !isUdpFront(udp)) return null;
    const crypto = SrtpCrypto.create(config);
    if (!crypto) return null;
    const path = new SrtpPath(dtls, session, crypto, udp, pair.protocol, udp.onData, onRtp);
    udp.onData = path.receive;
    return path;
  }

  private readonly receive = (data: Buffer, addr: Address): void => {
    if (!this.closed && data.length >= 12) {
      const b0 = data[0]!;
      const b1 = data[1]!;
      // RTP, not RTCP (RFC 5761 §4: packet types 192–223 are RTCP's under rtcp-mux).
      if (b0 >= 128 && b0 <= 191 && (b1 < 192 || b1 > 223)) {
        const clear = this.crypto.unprotect(data);
        if (clear) {
          const pkt = parseRtp(clear);
          if (pkt) this.onRtp(pkt);
          return;
        }
      }
    }
    this.inner(data, addr);
  };

  /** Protects one RTP packet built by the endpoint, as SSRC `ssrc`, and sends it. */
  send(packet: Buffer, ssrc: number): void {
    if (this.closed) return;
    const out = this.crypto.protect(packet, ssrc);
    if (!out) return;
    const conn = this.dtls.iceTransport.connection;
    if (conn.nominated !== this.routedFor) this.route(conn.nominated, conn.iceLite);
    if (this.direct && conn.state !== 'closed' && conn.state !== 'failed') {
      this.udp.socket.send(out, this.direct.port, this.direct.host);
      return;
    }
    conn.send(out).catch(() => {
      // Best effort, as RTP over UDP is.
    });
  }

  /**
   * Straight from the socket when werift's ICE connection would do just that: ICE-lite (always
   * consent to send, RFC 7675 §1), the pair on our socket, an IP address (no mDNS name to resolve).
   * Saves the three promises of werift's send chain per packet.
   */
  private route(pair: Pair | undefined, lite: boolean): void {
    this.routedFor = pair;
    this.direct = null;
    if (!pair || !lite || pair.protocol !== this.protocol) return;
    const [host, port] = pair.remoteAddr;
    if (isIP(host) !== 0) this.direct = { host, port };
  }

  /** Gives the datagrams back to werift. */
  detach(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.udp.onData === this.receive) this.udp.onData = this.inner;
  }
}
