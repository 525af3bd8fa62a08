/**
 * The supervisor's live stream over WebSocket (docs/supervision.md), on the HTTP port:
 * `GET /2012-04-24/Accounts/{AccountSid}/Supervisor/stream[?Scope=account][&since=SEQ]` upgraded,
 * authenticated by Basic on the upgrade (programs) or by `?ticket=` from
 * `POST /Supervisor.json/tickets` (browsers cannot set headers on a WebSocket). The role rules are
 * the Supervisor REST API's (`authorizeSupervision`).
 *
 * Every client has a bounded send buffer: one that lets more than `maxBufferedBytes` pile up is
 * closed with 1013 and a reason, so memory never grows with a consumer's slowness; a ping every
 * `heartbeatMs` drops a client that did not answer the previous one.
 */
import { randomBytes } from 'node:crypto';
import { type IncomingMessage, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import type { AccountService } from '../../actors/account/account-service.js';
import type { AccountFilter, LiveStream } from '../../actors/supervision/live-stream.js';
import { AppError, moreInfoUrl } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { type Account, AccountStatus, Role } from '../../store/account-store.js';
import type { StreamTicketStore } from '../../store/stream-ticket-store.js';
import { authenticateBasic, targetAccount } from '../auth.js';
import { callerOf, state } from '../context.js';
import { jsonDocument } from '../openapi/spec.js';
import { writeJson } from '../render.js';
import type { RouteTable } from '../router.js';
import { API_ROOT } from '../uris.js';
import { authorizeSupervision, SCOPES, SupervisorScope } from './supervisor.js';

/** Close code for a client that cannot keep up (RFC 6455 §7.4.1 "Try Again Later"). */
export const CLOSE_TOO_SLOW = 1013;

export interface StreamLimits {
  /** Bytes a client may leave unsent before it is disconnected. */
  readonly maxBufferedBytes: number;
  readonly heartbeatMs: number;
  readonly metricsIntervalMs: number;
  readonly ticketTtlMs: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = {
  maxBufferedBytes: 1024 * 1024,
  heartbeatMs: 15_000,
  metricsIntervalMs: 5_000,
  ticketTtlMs: 30_000,
};

export interface SupervisorStreamDeps {
  readonly stream: LiveStream;
  readonly accounts: AccountService;
  readonly tickets: StreamTicketStore;
  readonly logger: Logger;
  readonly publicUrl: string;
  readonly limits?: Partial<StreamLimits>;
}

const STREAM_PATH = /^\/2012-04-24\/Accounts\/([^/?]+)\/Supervisor\/stream\/?$/;

/** `POST /Accounts/{sid}/Supervisor.json/tickets`: a single-use ticket for the stream. */
export function supervisorTicketRoutes(routes: RouteTable, deps: SupervisorStreamDeps): void {
  const ttl = deps.limits?.ticketTtlMs ?? DEFAULT_STREAM_LIMITS.ticketTtlMs;
  const path = `${API_ROOT}/Accounts/:accountSid/Supervisor/tickets`;
  routes.resource(path, {
    POST: async (_req, res) => {
      state(res).format = 'json';
      const caller = callerOf(res);
      // Only who may open some stream gets a ticket; the scope is checked again when it is used.
      if (!caller.isSuperAdmin && caller.role !== Role.Administrator)
        throw new AppError('Forbidden', 'Only an Administrator supervises its accounts');
      const ticket = randomBytes(24).toString('base64url');
      await deps.tickets.issue(ticket, caller.sid, ttl);
      writeJson(res, { ticket, expires_in: Math.round(ttl / 1000) }, 201);
    },
  });
  routes.describe(path, {
    tag: 'Supervisor',
    jsonOnly: true,
    POST: {
      summary: 'A single-use ticket for the supervisor stream',
      description:
        'Served at `/Supervisor.json/tickets`. Pass it as `?ticket=` on the WebSocket upgrade of ' +
        '`/Supervisor/stream`; it is good once, for a few seconds.',
      response: jsonDocument(),
    },
  });
}

/** Accepts stream upgrades and feeds the connected clients. */
export class SupervisorStreamServer {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 4096 });
  private readonly limits: StreamLimits;
  private readonly alive = new WeakSet<WebSocket>();
  private readonly timers: NodeJS.Timeout[];
  /** The last frame's bytes: a window's batch is the same string for every node-wide client. */
  private lastText = '';
  private lastBytes = Buffer.alloc(0);

  constructor(private readonly deps: SupervisorStreamDeps) {
    this.limits = { ...DEFAULT_STREAM_LIMITS, ...deps.limits };
    this.timers = [
      setInterval(() => deps.stream.publishMetrics(), this.limits.metricsIntervalMs),
      setInterval(() => this.heartbeat(), this.limits.heartbeatMs),
    ];
    for (const t of this.timers) t.unref();
  }

  /** Handles the upgrade when it is for the stream (true); leaves it to others otherwise. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://localhost');
    } catch {
      return false;
    }
    const m = STREAM_PATH.exec(url.pathname);
    if (!m) return false;
    socket.on('error', () => socket.destroy());
    // Everything that may throw (the stores, a bad request) runs inside the promise: an
    // exception in an 'upgrade' listener would take the process down.
    Promise.resolve()
      .then(() => this.authorize(req, url, m[1] as string))
      .then(
        (accounts) => this.wss.handleUpgrade(req, socket, head, (ws) => this.connect(ws, url, accounts)),
        (err: unknown) => this.refuse(socket, err),
      )
      .catch((err: unknown) => {
        this.deps.logger.error({ err }, 'supervisor stream connection failed');
        socket.destroy();
      });
    return true;
  }

  /** Disconnects every client and stops the timers. */
  close(): void {
    for (const t of this.timers) clearInterval(t);
    for (const ws of this.wss.clients) ws.terminate();
    this.wss.close();
  }

  private async authorize(req: IncomingMessage, url: URL, rawAccount: string): Promise<AccountFilter> {
    let accountSid: string;
    try {
      accountSid = decodeURIComponent(rawAccount);
    } catch {
      throw new AppError('NotFound', 'No such account');
    }
    const scopeParam = url.searchParams.get('Scope') ?? SupervisorScope.Node;
    const scope = SCOPES.find((s) => s === scopeParam);
    if (!scope || scope === SupervisorScope.Cluster)
      throw new AppError('InvalidParameter', 'Scope must be node or account on the stream');
    const ticket = url.searchParams.get('ticket');
    const caller =
      ticket === null ? await authenticateBasic(this.deps.accounts, req) : await this.redeem(ticket);
    if (caller.status !== AccountStatus.Active)
      throw new AppError('AccountNotActive', `Account ${caller.sid} is ${caller.status}`);
    const account = await targetAccount(this.deps.accounts, caller, accountSid);
    return authorizeSupervision(this.deps.accounts, caller, account, scope);
  }

  private async redeem(ticket: string): Promise<Account> {
    const sid = ticket.length > 0 && ticket.length <= 64 ? await this.deps.tickets.redeem(ticket) : null;
    const caller = sid ? await this.deps.accounts.resolve(sid) : null;
    if (!caller) throw new AppError('Unauthenticated', 'Unknown or used ticket');
    return caller;
  }

  private connect(ws: WebSocket, url: URL, accounts: AccountFilter): void {
    this.alive.add(ws);
    ws.on('pong', () => this.alive.add(ws));
    ws.on('error', () => ws.terminate());
    const sinceParam = url.searchParams.get('since');
    const since = sinceParam !== null && /^\d+$/.test(sinceParam) ? Number(sinceParam) : undefined;
    const send = (frame: string) => {
      if (ws.readyState !== ws.OPEN) return;
      if (ws.bufferedAmount > this.limits.maxBufferedBytes) {
        subscription.unsubscribe();
        ws.close(CLOSE_TOO_SLOW, 'too slow: send buffer full');
        return;
      }
      ws.send(this.bytesOf(frame), { binary: false });
    };
    const subscription = this.deps.stream.subscribe(accounts, send, since);
    ws.on('close', () => subscription.unsubscribe());
    for (const frame of subscription.initial) send(frame);
  }

  /** UTF-8 of a frame, encoded once for all the clients it goes to. */
  private bytesOf(frame: string): Buffer {
    if (frame !== this.lastText) {
      this.lastText = frame;
      this.lastBytes = Buffer.from(frame);
    }
    return this.lastBytes;
  }

  private heartbeat(): void {
    for (const ws of this.wss.clients) {
      if (!this.alive.has(ws)) {
        ws.terminate();
        continue;
      }
      this.alive.delete(ws);
      ws.ping();
    }
  }

  private refuse(socket: Duplex, err: unknown): void {
    const e = err instanceof AppError ? err : new AppError('Internal', undefined, { cause: err });
    if (e.status >= 500) this.deps.logger.error({ err }, 'supervisor stream upgrade failed');
    const body = JSON.stringify({
      code: e.code,
      message: e.message,
      more_info: moreInfoUrl(this.deps.publicUrl, e.code),
      status: e.status,
    });
    const headers = {
      ...e.headers,
      'Content-Type': 'application/json',
      'Content-Length': String(Buffer.byteLength(body)),
      Connection: 'close',
    };
    const head = Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.end(`HTTP/1.1 ${e.status} ${STATUS_CODES[e.status] ?? ''}\r\n${head}\r\n${body}`);
  }
}
