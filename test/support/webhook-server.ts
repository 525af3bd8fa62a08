/**
 * A programmable in-process HTTP server for webhook tests: scripted responses per path (status,
 * headers, body, delay), plus `hang` (accept, never answer) and `destroy` (close the socket without a
 * response) modes. Records every request with method, url, headers and raw body. Listens on an
 * ephemeral loopback port.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ScriptedResponse {
  readonly status?: number;
  readonly headers?: Record<string, string>;
  readonly body?: string | Buffer;
  /** Wait before answering (ms). */
  readonly delayMs?: number;
  /** Accept the request and never answer. */
  readonly hang?: boolean;
  /** Destroy the socket without answering. */
  readonly destroy?: boolean;
  /** Stream this many bytes of filler (ignores `body`). */
  readonly streamBytes?: number;
  /** Announce a longer body, send this many bytes, then destroy the socket. */
  readonly abortAfterBytes?: number;
}

export interface RecordedRequest {
  readonly method: string;
  /** Path and query as received. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly rawBody: Buffer;
  readonly at: number;
  /** The client's port: equal for two requests that shared one keep-alive connection. */
  readonly remotePort: number;
}

export interface WebhookServer {
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  readonly requests: RecordedRequest[];
  /** Responses for `path` (query ignored) are taken in order; the last one repeats. */
  script(path: string, ...responses: ScriptedResponse[]): void;
  requestsTo(path: string): RecordedRequest[];
  close(): Promise<void>;
}

export async function startWebhookServer(): Promise<WebhookServer> {
  const scripts = new Map<string, ScriptedResponse[]>();
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();

  const respond = (res: ServerResponse, s: ScriptedResponse) => {
    if (s.hang) return;
    if (s.destroy) {
      res.socket?.destroy();
      return;
    }
    if (s.abortAfterBytes !== undefined) {
      res.writeHead(s.status ?? 200, {
        'Content-Type': 'text/xml',
        'Content-Length': String(s.abortAfterBytes * 2 + 1),
      });
      res.write(Buffer.alloc(s.abortAfterBytes, 0x62), () => {
        const t = setTimeout(() => {
          timers.delete(t);
          res.socket?.destroy();
        }, 20);
        timers.add(t);
      });
      return;
    }
    res.writeHead(s.status ?? 200, { 'Content-Type': 'text/xml', ...(s.headers ?? {}) });
    if (s.streamBytes !== undefined) {
      const chunk = Buffer.alloc(16 * 1024, 0x61);
      let left = s.streamBytes;
      const pump = () => {
        while (left > 0) {
          const n = Math.min(left, chunk.length);
          left -= n;
          if (!res.write(chunk.subarray(0, n))) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      res.on('error', () => {});
      pump();
      return;
    }
    res.end(s.body ?? '');
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawBody: Buffer.concat(chunks),
        at: Date.now(),
        remotePort: req.socket.remotePort ?? 0,
      });
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      const list = scripts.get(path);
      const s: ScriptedResponse =
        list && list.length > 0 ? (list.length > 1 ? list.shift()! : list[0]!) : { status: 404 };
      if (s.delayMs) {
        const t = setTimeout(() => {
          timers.delete(t);
          respond(res, s);
        }, s.delayMs);
        timers.add(t);
      } else respond(res, s);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    requests,
    script(path, ...responses) {
      scripts.set(path, [...responses]);
    },
    requestsTo(path) {
      return requests.filter((r) => (r.url.split('?')[0] ?? '') === path);
    },
    close() {
      for (const t of timers) clearTimeout(t);
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A loopback port with nothing listening (bound then released), for connection-refused tests. */
export async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}
