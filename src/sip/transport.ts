/**
 * SIP transports we own: UDP, TCP (RFC 3261 §18) and WebSocket, plain or secure (RFC 7118: WS for
 * development, WSS with the operator's certificate for browsers on real pages). They frame messages
 * and hand raw text (latin1) to the stack, which validates before it parses; the `sip` package's
 * own sockets drop what they cannot parse, and we must answer 400 instead.
 *
 * A flow is the 5-tuple a message arrived on. Responses go back over the request's flow, and calls
 * to a client registered over TCP or WS reuse the connection it registered on (RFC 5626 style).
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import type { IncomingMessage } from 'node:http';
import { createServer, isIPv6, connect as netConnect, type Server, type Socket } from 'node:net';
import type { Logger } from 'pino';
import type { StackMessage } from 'sip';
import * as stack from 'sip';
import type { WebSocket } from 'ws';
import type { SipWireDirection } from '../metrics/port.js';
import { literalLookup } from '../udp-lookup.js';
import {
  type BoundPorts,
  type Flow,
  isWebSocketProtocol,
  type RawMessageHandler,
  type SipConnection,
  type Target,
  type TransportOptions,
  type TransportProtocol,
} from './flow.js';
import { StreamFramer } from './stream-framing.js';
import { listenWebSocket, type WsListener } from './ws-listener.js';

const DEFAULT_MAX_HEADER = 64 * 1024;
const DEFAULT_MAX_BODY = 256 * 1024;
const IDLE_STREAM_MS = 10 * 60_000;
/** UDP socket buffers, each way (4 MiB: about 8,000 REGISTERs queued while the loop is busy). */
const UDP_BUFFER_BYTES = 4 * 1024 * 1024;

const key = (address: string, port: number) => `${address}|${port}`;
const wsKey = (protocol: 'WS' | 'WSS', address: string, port: number) => `${protocol}|${address}|${port}`;

export class SipTransports {
  private udp: UdpSocket | null = null;
  private tcp: Server | null = null;
  private readonly wsListeners: WsListener[] = [];
  private readonly streams = new Map<string, Socket>();
  private readonly sockets = new Map<string, WebSocket>();
  private ports: BoundPorts = { udp: null, tcp: null, ws: null, wss: null };
  private closed = false;

  constructor(
    private readonly options: TransportOptions,
    private readonly onMessage: RawMessageHandler,
    private readonly log: Logger,
  ) {}

  get bound(): BoundPorts {
    return this.ports;
  }

  /** The port advertised in Via and Contact (UDP and TCP share one number). */
  get sipPort(): number {
    return this.ports.udp ?? this.ports.tcp ?? this.options.port;
  }

  /** The port advertised in Via and Contact of messages sent over `protocol`. */
  portFor(protocol: TransportProtocol): number {
    if (protocol === 'WS') return this.ports.ws ?? this.sipPort;
    if (protocol === 'WSS') return this.ports.wss ?? this.sipPort;
    return this.sipPort;
  }

  /** Binds every enabled listener. With port 0, UDP picks a port and TCP takes the same number. */
  async start(): Promise<BoundPorts> {
    const { udp, tcp, port } = this.options;
    for (let attempt = 0; ; attempt++) {
      let udpPort: number | null = null;
      try {
        if (udp) udpPort = await this.bindUdp(port);
        const tcpPort = tcp ? await this.listenTcp(udpPort ?? port) : null;
        this.ports = { ...this.ports, udp: udpPort, tcp: tcpPort };
        break;
      } catch (e) {
        this.udp?.close();
        this.udp = null;
        if (port !== 0 || attempt >= 8) throw e;
      }
    }
    if (this.options.wsPort !== null)
      this.ports = { ...this.ports, ws: await this.listenWs('WS', this.options.wsPort) };
    if (this.options.wssPort !== null && this.options.wssPort !== undefined)
      this.ports = { ...this.ports, wss: await this.listenWs('WSS', this.options.wssPort) };
    return this.ports;
  }

  private bindUdp(port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const socket = createSocket({
        type: isIPv6(this.options.host) ? 'udp6' : 'udp4',
        // The default receive buffer (about 200 KB, some 400 requests) overflows whenever the process
        // is off the CPU for a GC or a busy neighbour's time slice at a few thousand requests/s; each
        // drop costs the client a 500 ms retransmission. The kernel caps this at net.core.rmem_max.
        recvBufferSize: UDP_BUFFER_BYTES,
        sendBufferSize: UDP_BUFFER_BYTES,
        lookup: literalLookup,
      });
      socket.once('error', reject);
      socket.on('message', (data, rinfo) => {
        this.deliver(data.toString('latin1'), {
          protocol: 'UDP',
          address: rinfo.address,
          port: rinfo.port,
          local: { address: this.options.host, port: this.ports.udp ?? port },
        });
      });
      socket.bind(port, this.options.host, () => {
        socket.off('error', reject);
        socket.on('error', (err) => this.log.warn({ err }, 'sip udp socket error'));
        this.udp = socket;
        resolve(socket.address().port);
      });
    });
  }

  private listenTcp(port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const server = createServer((socket) => this.adoptStream(socket));
      server.once('error', reject);
      server.listen(port, this.options.host, () => {
        server.off('error', reject);
        this.tcp = server;
        const a = server.address();
        resolve(typeof a === 'object' && a ? a.port : port);
      });
    });
  }

  private async listenWs(protocol: 'WS' | 'WSS', port: number): Promise<number> {
    const { tlsCert, tlsKey } = this.options;
    if (protocol === 'WSS' && (!tlsCert || !tlsKey)) throw new Error('SIP WSS needs TLS_CERT and TLS_KEY');
    const listener = await listenWebSocket({
      protocol,
      host: this.options.host,
      port,
      maxPayload:
        (this.options.maxHeaderBytes ?? DEFAULT_MAX_HEADER) + (this.options.maxBodyBytes ?? DEFAULT_MAX_BODY),
      ...(protocol === 'WSS' && tlsCert && tlsKey ? { tls: { certFile: tlsCert, keyFile: tlsKey } } : {}),
      log: this.log,
      onConnection: (ws, req) => this.adoptWebSocket(protocol, ws, req),
    });
    this.wsListeners.push(listener);
    return listener.port;
  }

  private adoptWebSocket(protocol: 'WS' | 'WSS', ws: WebSocket, req: IncomingMessage): void {
    const remote = { address: req.socket.remoteAddress ?? '', port: req.socket.remotePort ?? 0 };
    const flow: Flow = {
      protocol,
      ...remote,
      local: { address: req.socket.localAddress ?? '', port: req.socket.localPort ?? 0 },
    };
    const k = wsKey(protocol, remote.address, remote.port);
    this.sockets.set(k, ws);
    ws.on('message', (data) => {
      const buf = Array.isArray(data)
        ? Buffer.concat(data)
        : Buffer.isBuffer(data)
          ? data
          : Buffer.from(data);
      this.deliver(buf.toString('latin1'), flow);
    });
    ws.on('close', () => {
      if (this.sockets.get(k) === ws) this.sockets.delete(k);
    });
    ws.on('error', () => ws.terminate());
  }

  /** Takes a TCP connection: its byte stream framed into messages (stream-framing.ts). */
  private adoptStream(socket: Socket): void {
    const remote = { address: socket.remoteAddress ?? '', port: socket.remotePort ?? 0 };
    const k = key(remote.address, remote.port);
    this.streams.set(k, socket);
    const flow: Flow = {
      protocol: 'TCP',
      ...remote,
      local: { address: socket.localAddress ?? '', port: socket.localPort ?? 0 },
    };
    const framer = new StreamFramer(
      {
        maxHeaderBytes: this.options.maxHeaderBytes ?? DEFAULT_MAX_HEADER,
        maxBodyBytes: this.options.maxBodyBytes ?? DEFAULT_MAX_BODY,
      },
      {
        message: (raw) => this.deliver(raw, flow),
        pong: () => socket.write('\r\n'),
        overflow: () => socket.destroy(),
      },
    );
    socket.setEncoding('latin1');
    socket.setTimeout(IDLE_STREAM_MS, () => socket.destroy());
    // A destroyed socket may still hand over the rest of a chunk already read: not framed any more.
    socket.on('data', (chunk: string) => {
      if (!socket.destroyed) framer.push(chunk);
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      if (this.streams.get(k) === socket) this.streams.delete(k);
    });
  }

  private deliver(raw: string, flow: Flow): void {
    if (this.closed) return;
    try {
      this.onMessage(raw, flow);
    } catch (err) {
      this.log.error({ err }, 'sip message handler failed');
    }
  }

  /** A connection to the flow a request came in on (for its responses); undefined when gone. */
  get(flow: Flow): SipConnection | undefined {
    if (flow.protocol === 'UDP') return this.udpConnection(flow);
    if (flow.protocol === 'TCP') {
      const s = this.streams.get(key(flow.address, flow.port));
      return s && !s.destroyed ? this.streamConnection(s, 'TCP') : undefined;
    }
    const ws = this.sockets.get(wsKey(flow.protocol, flow.address, flow.port));
    return ws ? this.wsConnection(ws, flow.protocol) : undefined;
  }

  /** Whether the flow still exists (a TCP/WS client's connection is open). UDP flows always do. */
  isOpen(flow: Flow): boolean {
    return flow.protocol === 'UDP' ? this.udp !== null : this.get(flow) !== undefined;
  }

  /**
   * A connection to a next hop: UDP, an open TCP/WS connection to that address, or a new TCP
   * connection. `onError` runs when the connection fails (the caller turns it into a 503).
   */
  open(target: Target, onError: (err: Error) => void): SipConnection | undefined {
    const protocol = target.protocol.toUpperCase();
    if (protocol === 'UDP') return this.udp ? this.udpConnection(target) : undefined;
    if (protocol === 'TCP' && this.tcp) {
      const existing = this.streams.get(key(target.address, target.port));
      if (existing && !existing.destroyed) return this.streamConnection(existing, 'TCP');
      const socket = netConnect({ host: target.address, port: target.port });
      socket.once('error', onError);
      socket.once('connect', () => socket.off('error', onError));
      this.adoptStreamOutbound(socket, target);
      return this.streamConnection(socket, 'TCP');
    }
    if (isWebSocketProtocol(protocol)) {
      const ws = this.sockets.get(wsKey(protocol, target.address, target.port));
      return ws ? this.wsConnection(ws, protocol) : undefined;
    }
    return undefined;
  }

  private adoptStreamOutbound(socket: Socket, target: Target): void {
    // The remote address is known before connect; register under it so replies and reuse find it.
    const k = key(target.address, target.port);
    this.streams.set(k, socket);
    socket.once('connect', () => {
      this.streams.delete(k);
      this.adoptStream(socket);
    });
    socket.once('close', () => {
      if (this.streams.get(k) === socket) this.streams.delete(k);
    });
  }

  /**
   * The one place SIP traffic is metered: every message written by a connection below, every
   * stateless answer (`sendRaw`), and every parsed message the stack receives.
   */
  countWire(direction: SipWireDirection, m: StackMessage): void {
    const meter = this.options.meter;
    if (!meter) return;
    if (m.method) meter.request(direction, m.method);
    else if (typeof m.status === 'number') meter.response(direction, m.status);
  }

  /** The count of a request read without the package (a REGISTER). */
  countRequest(direction: SipWireDirection, method: string): void {
    this.options.meter?.request(direction, method);
  }

  /** Our Via on a request about to be written, and the count of what is written. */
  private outgoing(m: StackMessage, protocol: TransportProtocol): void {
    this.countWire('out', m);
    this.stampVia(m, protocol);
  }

  private stampVia(m: StackMessage, protocol: TransportProtocol): void {
    if (!m.method || !m.headers.via?.[0]) return;
    const via = m.headers.via[0];
    via.host = this.options.publicAddress;
    via.port = this.portFor(protocol);
    via.protocol = protocol;
    via.version = '2.0';
    if (protocol === 'UDP' && !('rport' in via.params)) via.params.rport = null;
  }

  private udpConnection(target: { address: string; port: number }): SipConnection {
    return {
      protocol: 'UDP',
      send: (m) => {
        this.outgoing(m, 'UDP');
        // After close() (shutdown) a late send — a retransmission timer, a BYE — has nowhere to go.
        if (this.closed) return;
        const data = Buffer.from(stack.stringify(m), 'latin1');
        this.udp?.send(data, target.port, target.address);
      },
      release: () => {},
    };
  }

  private streamConnection(socket: Socket, protocol: 'TCP'): SipConnection {
    return {
      protocol,
      send: (m) => {
        this.outgoing(m, protocol);
        if (!socket.destroyed) socket.write(stack.stringify(m), 'latin1');
      },
      release: () => {},
    };
  }

  private wsConnection(ws: WebSocket, protocol: 'WS' | 'WSS'): SipConnection {
    return {
      protocol,
      send: (m) => {
        this.outgoing(m, protocol);
        if (ws.readyState === ws.OPEN) ws.send(Buffer.from(stack.stringify(m), 'latin1').toString('utf8'));
      },
      release: () => {},
    };
  }

  /**
   * Writes bytes as they are (stateless answers). `status` is the response's, when the caller knows
   * it; else it is read from the text, for the meter. `bytes`, when the caller has them, are the
   * text's latin1 bytes, sent as they are over UDP (a datagram is written at once; a stream might
   * queue them past the time the caller's buffer keeps them, so streams take the text).
   */
  sendRaw(flow: Flow, text: string, status?: number, bytes?: Buffer | null): void {
    const meter = this.options.meter;
    if (meter) {
      const code = status ?? Number(/^SIP\/2\.0 (\d{3}) /.exec(text)?.[1] ?? 0);
      if (code) meter.response('out', code);
    }
    if (flow.protocol === 'UDP')
      this.udp?.send(bytes ?? Buffer.from(text, 'latin1'), flow.port, flow.address);
    else if (flow.protocol === 'TCP') this.streams.get(key(flow.address, flow.port))?.write(text, 'latin1');
    else
      this.sockets
        .get(wsKey(flow.protocol, flow.address, flow.port))
        ?.send(Buffer.from(text, 'latin1').toString('utf8'));
  }

  /** Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.streams.values()) s.destroy();
    for (const ws of this.sockets.values()) ws.terminate();
    this.streams.clear();
    this.sockets.clear();
    await Promise.all([
      new Promise<void>((r) => (this.udp ? this.udp.close(() => r()) : r())),
      new Promise<void>((r) => (this.tcp ? this.tcp.close(() => r()) : r())),
      ...this.wsListeners.map((l) => l.close()),
    ]);
  }
}
