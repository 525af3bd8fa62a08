/**
 * A client of the supervisor stream (docs/supervision.md) for tests and benchmarks: connects with
 * Basic credentials or a ticket, keeps every frame with its receipt time (a batch of deltas is
 * unpacked into its frames), and waits for frames.
 * `pause()` stops reading the socket, as a consumer that falls behind would.
 */
import type { ClientRequestArgs } from 'node:http';
import { connect, type Socket } from 'node:net';
import WebSocket from 'ws';

export interface StreamFrame {
  readonly type: string;
  readonly seq: number;
  readonly at: number;
  readonly [member: string]: unknown;
}

export interface Received {
  readonly frame: StreamFrame;
  /** Epoch ms when the client read it. */
  readonly receivedAt: number;
}

export interface StreamClientOptions {
  /** Base HTTP URL of the server (`http://127.0.0.1:port`). */
  readonly url: string;
  readonly accountSid: string;
  readonly auth?: { readonly user: string; readonly secret: string };
  readonly query?: Record<string, string>;
}

/** The HTTP status of a refused upgrade. */
export class UpgradeRefused extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`upgrade refused: ${status}`);
  }
}

export class StreamClient {
  readonly received: Received[] = [];
  /** Close code and reason once closed. */
  closed: { code: number; reason: string } | null = null;
  private waiters: (() => void)[] = [];

  private constructor(
    private readonly ws: WebSocket,
    private readonly socket: () => Socket | undefined,
  ) {
    ws.on('message', (data) => {
      const receivedAt = Date.now();
      // One frame object, or several deltas of one flush window as an array.
      const parsed = JSON.parse(String(data)) as StreamFrame | StreamFrame[];
      for (const frame of Array.isArray(parsed) ? parsed : [parsed])
        this.received.push({ frame, receivedAt });
      this.wake();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: String(reason) };
      this.wake();
    });
  }

  static async open(o: StreamClientOptions): Promise<StreamClient> {
    const qs = new URLSearchParams(o.query ?? {}).toString();
    const url = `${o.url.replace(/^http/, 'ws')}/2012-04-24/Accounts/${o.accountSid}/Supervisor/stream${qs ? `?${qs}` : ''}`;
    let socket: Socket | undefined;
    const headers: Record<string, string> = {};
    if (o.auth)
      headers.authorization = `Basic ${Buffer.from(`${o.auth.user}:${o.auth.secret}`).toString('base64')}`;
    // Our own connection, so `pause()` can stop reading the very socket the frames arrive on.
    const createConnection = (opts: ClientRequestArgs) => {
      socket = connect({ host: opts.hostname ?? opts.host ?? '127.0.0.1', port: Number(opts.port) });
      return socket;
    };
    const ws = new WebSocket(url, { headers, createConnection } as WebSocket.ClientOptions);
    const client = new StreamClient(ws, () => socket);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => {
          body += String(c);
        });
        res.on('end', () => reject(new UpgradeRefused(res.statusCode ?? 0, body)));
      });
    });
    return client;
  }

  get frames(): StreamFrame[] {
    return this.received.map((r) => r.frame);
  }

  /** The highest seq received so far. */
  get lastSeq(): number {
    return this.received.reduce((n, r) => Math.max(n, r.frame.seq), 0);
  }

  /** Resolves with the first frame (from the start) that matches, waiting up to `ms`. */
  async next(match: (f: StreamFrame) => boolean, ms = 10_000): Promise<StreamFrame> {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = this.frames.find(match);
      if (found) return found;
      if (this.closed) throw new Error(`stream closed (${this.closed.code} ${this.closed.reason})`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no matching stream frame in time');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** Resolves once the server closed the stream (or `ms` passed: null). */
  async whenClosed(ms = 10_000): Promise<{ code: number; reason: string } | null> {
    const deadline = Date.now() + ms;
    while (!this.closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return this.closed;
  }

  /** Stops reading: the server's send buffer for this client fills up. */
  pause(): void {
    this.socket()?.pause();
  }

  resume(): void {
    this.socket()?.resume();
  }

  close(): void {
    this.ws.terminate();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }
}
