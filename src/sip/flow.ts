/**
 * What the SIP layers above the transports know of them: a flow (the 5-tuple a message came on, which
 * its answers and a registered client's calls go back over), a next hop, a connection for the
 * transaction layer, and the transports' options. The sockets themselves are transport.ts's.
 */
import type { StackConnection } from 'sip';
import type { SipMeter } from '../metrics/port.js';

export type TransportProtocol = 'UDP' | 'TCP' | 'WS' | 'WSS';

/** WebSocket flows (RFC 7118): a browser's, reached only over the connection it opened. */
export const isWebSocketProtocol = (protocol: string): protocol is 'WS' | 'WSS' =>
  protocol === 'WS' || protocol === 'WSS';

/** A node's SIP address (its advertised host and SIP port). */
export interface FlowHome {
  readonly address: string;
  readonly port: number;
}

export interface Flow {
  readonly protocol: TransportProtocol;
  readonly address: string;
  readonly port: number;
  readonly local: { readonly address: string; readonly port: number };
  /**
   * The SIP address of the node holding this connection, stamped by the registrar on the bindings
   * it takes; other nodes reach a TCP/WS client through it (flow-relay.ts).
   */
  readonly node?: FlowHome;
}

export interface Target {
  readonly protocol: string;
  readonly address: string;
  readonly port: number;
}

export interface TransportOptions {
  readonly host: string;
  readonly port: number;
  readonly publicAddress: string;
  readonly udp: boolean;
  readonly tcp: boolean;
  readonly wsPort: number | null;
  /** RFC 7118 secure WebSocket listener port, or null for none (needs `tlsCert` and `tlsKey`). */
  readonly wssPort?: number | null;
  /** PEM certificate chain and private key files of the WSS listener (read at start). */
  readonly tlsCert?: string | null;
  readonly tlsKey?: string | null;
  /** Largest header section accepted on a stream, bytes. */
  readonly maxHeaderBytes?: number;
  /** Largest body accepted, bytes (UDP datagrams are capped by their size anyway). */
  readonly maxBodyBytes?: number;
  /** Counts what crosses the wire (`countWire`); without it nothing is counted. */
  readonly meter?: SipMeter;
}

export interface BoundPorts {
  readonly udp: number | null;
  readonly tcp: number | null;
  readonly ws: number | null;
  readonly wss: number | null;
}

export type RawMessageHandler = (raw: string, flow: Flow) => void;

/** A connection for the transaction layer: `send` stamps our Via and writes the message. */
export interface SipConnection extends StackConnection {
  readonly protocol: TransportProtocol;
}
