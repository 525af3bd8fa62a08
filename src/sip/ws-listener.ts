/**
 * A SIP WebSocket listener (RFC 7118): plain (WS) on its own port, or secure (WSS) over an HTTPS
 * server with the operator's certificate files. Only upgrades that ask for the `sip` subprotocol are
 * accepted; each accepted connection is handed over with the flow it is (transport.ts owns it then).
 */
import { readFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { Logger } from 'pino';
import { type WebSocket, WebSocketServer } from 'ws';

export interface WsListenerOptions {
  readonly protocol: 'WS' | 'WSS';
  readonly host: string;
  readonly port: number;
  /** Largest message accepted, bytes. */
  readonly maxPayload: number;
  /** PEM certificate chain and key files (WSS only), read now: a renewal needs a restart. */
  readonly tls?: { readonly certFile: string; readonly keyFile: string };
  readonly log: Logger;
  readonly onConnection: (ws: WebSocket, req: IncomingMessage) => void;
}

export interface WsListener {
  readonly port: number;
  /** Stops listening (the caller terminates the connections it adopted). */
  close(): Promise<void>;
}

/** RFC 7118 §4.1: a connection is for SIP only when the client asks for the `sip` subprotocol. */
const asksForSip = ({ req }: { req: IncomingMessage }) =>
  String(req.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .some((p) => p.trim().toLowerCase() === 'sip');

export async function listenWebSocket(o: WsListenerOptions): Promise<WsListener> {
  const https = o.tls ? await listenTls(o, o.tls) : null;
  const wss = new WebSocketServer({
    ...(https ? { server: https } : { host: o.host, port: o.port }),
    maxPayload: o.maxPayload,
    handleProtocols: (protocols) => (protocols.has('sip') ? 'sip' : false),
    // Anything else is refused at the upgrade (400) rather than fed text we would misread.
    verifyClient: asksForSip,
  });
  await new Promise<void>((resolve, reject) => {
    if (https) return resolve();
    wss.once('error', reject);
    wss.once('listening', () => {
      wss.off('error', reject);
      resolve();
    });
  });
  wss.on('error', (err) => o.log.warn({ err, protocol: o.protocol }, 'sip ws server error'));
  wss.on('connection', o.onConnection);
  const a = (https ?? wss).address();
  return {
    port: typeof a === 'object' && a ? a.port : o.port,
    close: async () => {
      await new Promise<void>((r) => wss.close(() => r()));
      await new Promise<void>((r) => (https ? https.close(() => r()) : r()));
    },
  };
}

async function listenTls(
  o: WsListenerOptions,
  tls: { readonly certFile: string; readonly keyFile: string },
): Promise<HttpsServer> {
  const [cert, key] = await Promise.all([readFile(tls.certFile), readFile(tls.keyFile)]);
  const server = createHttpsServer({ cert, key });
  // A client that never finishes its TLS handshake (or sends garbage) is dropped, never fatal.
  server.on('tlsClientError', (err) => o.log.debug({ err }, 'sip wss handshake failed'));
  server.on('clientError', (_err, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      server.on('error', (err) => o.log.warn({ err }, 'sip wss server error'));
      resolve();
    });
  });
  return server;
}
