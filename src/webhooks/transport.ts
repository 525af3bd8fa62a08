/**
 * The HTTP exchange under the webhook client: one undici `Agent` (keep-alive pool per origin) whose
 * connector resolves every host name through the address policy, and per-request timers for Twilio's
 * connect (`ct`), read (`rt`) and total (`tt`) timeouts. One `send()` is one request and one response,
 * read up to the body cap; retries, redirects and fallback belong to the client above.
 *
 * Why the connect and read timers are ours and not the Agent's: `ct` is per URL (the `#ct=` fragment)
 * while the connector's timeout is per Agent; undici can cancel a request only once it reaches a connected
 * socket; and its headers/body timeouts tick on a ~1 s clock, too coarse for `rt=100`. So the attempt
 * settles on native timers driven by the request's progress (the dispatch handler in `exchange`), and
 * undici's own timeouts only reap what an abandoned attempt leaves behind.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Agent, type Dispatcher } from 'undici';
import {
  defaultResolver,
  POLICY_REFUSED,
  policyLookup,
  type Resolver,
  refusedTarget,
} from './connect-policy.js';
import type { OutgoingRequest } from './outgoing.js';
import { FailureKind } from './types.js';
import { RetryClass } from './url-policy.js';

/** A failure of one exchange, as data (thrown only through timers and aborts inside this module). */
export class AttemptError extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    readonly retryClass: RetryClass | null,
  ) {
    super(message);
  }
}

export interface AttemptOk {
  readonly ok: true;
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}
export interface AttemptFail {
  readonly ok: false;
  readonly kind: FailureKind;
  readonly message: string;
  readonly retryClass: RetryClass | null;
  readonly status?: number;
  readonly headers?: Record<string, string>;
  readonly body?: string;
}
export type AttemptResult = AttemptOk | AttemptFail;

/** Timeouts of one exchange. */
export interface ExchangeTimeouts {
  readonly connectTimeoutMs: number;
  /** Idle time allowed while waiting for the response head and between body chunks. */
  readonly readTimeoutMs: number;
  /** Time left for the whole exchange (what remains of the URL's total timeout). */
  readonly budgetMs: number;
}

export interface TransportOptions {
  readonly blockPrivate: boolean;
  readonly maxBodyBytes: number;
  readonly resolver?: Resolver;
  /** Longest connect timeout a request may ask for; the Agent drops connection attempts after it. */
  readonly maxConnectTimeoutMs: number;
}

/** Highest `ct` a URL fragment may set (url-policy.ts ranges). */
const FRAGMENT_MAX_CONNECT_MS = 10_000;

function flattenHeaders(h: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined) continue;
    out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/** A failure raised before any response byte, classified by the error's code. */
function beforeResponse(err: unknown, url: URL, timeouts: ExchangeTimeouts): AttemptError {
  if (err instanceof AttemptError) return err;
  const e: NodeJS.ErrnoException = err instanceof Error ? err : new Error(String(err));
  const code = e.code;
  switch (code) {
    case POLICY_REFUSED:
      return new AttemptError(FailureKind.BlockedByPolicy, e.message, null);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
    case 'EAI_NONAME':
      return new AttemptError(FailureKind.BadHost, `cannot resolve ${url.hostname}`, RetryClass.Connect);
    case 'ECONNREFUSED':
      return new AttemptError(FailureKind.Refused, `connection refused by ${url.host}`, RetryClass.Connect);
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new AttemptError(FailureKind.ConnectTimeout, e.message, RetryClass.Connect);
    case 'UND_ERR_HEADERS_TIMEOUT':
      return new AttemptError(
        FailureKind.Timeout,
        `no data for ${timeouts.readTimeoutMs} ms`,
        RetryClass.ReadTimeout,
      );
    default:
      // Reset/closed before any response counts as a connection failure (retryable as `ct`).
      return new AttemptError(FailureKind.Network, `${code ?? 'error'}: ${e.message}`, RetryClass.Connect);
  }
}

/** A failure while the body streams in: not retried, except a stall (the read timeout). */
function duringBody(err: unknown, timeouts: ExchangeTimeouts): AttemptError {
  if (err instanceof AttemptError) return err;
  const e: NodeJS.ErrnoException = err instanceof Error ? err : new Error(String(err));
  if (e.code === 'UND_ERR_BODY_TIMEOUT') {
    return new AttemptError(
      FailureKind.Timeout,
      `no data for ${timeouts.readTimeoutMs} ms`,
      RetryClass.ReadTimeout,
    );
  }
  // The peer closed the connection mid-body: a network failure after a response started.
  return new AttemptError(FailureKind.Network, `response aborted: ${e.message}`, null);
}

/** Makes policy-checked HTTP exchanges over one pooled undici Agent. `close()` ends them all. */
export class WebhookTransport {
  private readonly agent: Agent;
  private readonly inFlight = new Set<(err: AttemptError) => void>();
  private closed = false;

  constructor(private readonly options: TransportOptions) {
    this.agent = new Agent({
      // Up to 256 sockets per origin, so many calls can fetch markup from one application at once.
      connections: 256,
      connect: {
        // Every connection, redirects included, resolves through the policy and is pinned to the checked address.
        lookup: policyLookup(options.resolver ?? defaultResolver, { blockPrivate: options.blockPrivate }),
        timeout: Math.max(options.maxConnectTimeoutMs, FRAGMENT_MAX_CONNECT_MS),
      },
    });
  }

  /** Ends exchanges in flight (a `network` failure, not retryable) and releases pooled sockets. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const closing = new AttemptError(FailureKind.Network, 'webhook client closed', null);
    for (const stop of [...this.inFlight]) stop(closing);
    this.inFlight.clear();
    this.agent.destroy(closing).catch(() => {});
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** One request and its response, within `timeouts`. Never rejects. */
  send(request: OutgoingRequest, timeouts: ExchangeTimeouts): Promise<AttemptResult> {
    if (this.closed) {
      return Promise.resolve({
        ok: false,
        kind: FailureKind.Network,
        message: 'webhook client closed',
        retryClass: null,
      });
    }
    const refused = refusedTarget(request.url, { blockPrivate: this.options.blockPrivate });
    if (refused) {
      return Promise.resolve({
        ok: false,
        kind: FailureKind.BlockedByPolicy,
        message: refused,
        retryClass: null,
      });
    }
    return new Promise<AttemptResult>((resolve) => this.exchange(request, timeouts, resolve));
  }

  private exchange(
    request: OutgoingRequest,
    timeouts: ExchangeTimeouts,
    resolve: (result: AttemptResult) => void,
  ): void {
    const { url } = request;
    const maxBody = this.options.maxBodyBytes;
    let settled = false;
    let status: number | undefined;
    let headers: Record<string, string> | undefined;
    // undici's handle on the request, from the moment it reaches a connected socket.
    let undiciRequest: Dispatcher.DispatchController | null = null;
    let abortReason: AttemptError | null = null;
    const timers: NodeJS.Timeout[] = [];
    const finish = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      for (const tm of timers) clearTimeout(tm);
      this.inFlight.delete(stop);
      resolve(result);
    };
    const fail = (err: AttemptError, bodyText?: string) => {
      finish({
        ok: false,
        kind: err.kind,
        message: err.message,
        retryClass: err.retryClass,
        ...(status === undefined ? {} : { status }),
        ...(headers === undefined ? {} : { headers }),
        ...(bodyText === undefined ? {} : { body: bodyText }),
      });
    };
    // Settles now and cancels the undici request (at once, or as soon as it reaches a socket).
    const stop = (err: AttemptError, bodyText?: string) => {
      fail(err, bodyText);
      abortReason ??= err;
      undiciRequest?.abort(err);
    };
    this.inFlight.add(stop);

    const { budgetMs } = timeouts;
    timers.push(
      setTimeout(
        () =>
          stop(
            new AttemptError(
              FailureKind.Timeout,
              `no complete response within ${budgetMs} ms`,
              RetryClass.ReadTimeout,
            ),
          ),
        budgetMs,
      ),
    );
    const ct = Math.min(timeouts.connectTimeoutMs, budgetMs);
    const connectTimer = setTimeout(
      () =>
        stop(
          new AttemptError(FailureKind.ConnectTimeout, `connect timeout after ${ct} ms`, RetryClass.Connect),
        ),
      ct,
    );
    timers.push(connectTimer);
    // Idle timer from the end of the connect phase, restarted by every response byte (Twilio `rt`).
    const rt = timeouts.readTimeoutMs;
    let readTimer: NodeJS.Timeout | undefined;
    const chunks: Buffer[] = [];
    let size = 0;

    // A handler of undici's dispatch API, not `request()`: the response body is read here, without
    // the Readable stream, abort signal and promise `request()` makes for every exchange.
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart: (controller) => {
        undiciRequest = controller;
        if (abortReason) {
          controller.abort(abortReason);
          return;
        }
        // The request reached a connected socket: the connect phase is over.
        clearTimeout(connectTimer);
        if (settled || readTimer) return;
        readTimer = setTimeout(
          () => stop(new AttemptError(FailureKind.Timeout, `no data for ${rt} ms`, RetryClass.ReadTimeout)),
          rt,
        );
        timers.push(readTimer);
      },
      onResponseStart: (controller, statusCode, responseHeaders) => {
        readTimer?.refresh();
        if (settled) {
          controller.abort(abortReason ?? new AttemptError(FailureKind.Network, 'abandoned', null));
          return;
        }
        status = statusCode;
        headers = flattenHeaders(responseHeaders);
        const declared = Number(headers['content-length'] ?? Number.NaN);
        if (declared > maxBody) {
          stop(
            new AttemptError(
              FailureKind.TooLarge,
              `response body of ${declared} bytes exceeds ${maxBody}`,
              null,
            ),
          );
        }
      },
      onResponseData: (_controller, chunk) => {
        readTimer?.refresh();
        if (settled) return;
        size += chunk.length;
        if (size > maxBody) {
          const kept = Buffer.concat(chunks).toString('utf8');
          stop(new AttemptError(FailureKind.TooLarge, `response body exceeds ${maxBody} bytes`, null), kept);
          return;
        }
        chunks.push(chunk);
      },
      onResponseEnd: () => {
        if (settled) return;
        const text = Buffer.concat(chunks).toString('utf8');
        const code = status ?? 0;
        if (code >= 200 && code < 300) {
          finish({ ok: true, status: code, headers: headers ?? {}, body: text });
          return;
        }
        const cls = code >= 500 ? RetryClass.Status5xx : code >= 400 ? RetryClass.Status4xx : null;
        fail(new AttemptError(FailureKind.HttpStatus, `HTTP ${code} from ${url.host}`, cls), text);
      },
      onResponseError: (_controller, err) => {
        if (settled) return;
        fail(status === undefined ? beforeResponse(err, url, timeouts) : duringBody(err, timeouts));
      },
    };
    this.agent.dispatch(
      {
        origin: url.origin,
        path: url.pathname + url.search,
        method: request.method,
        headers: request.headers,
        body: request.body,
        // Backstops on undici's coarse clock; the read timer above fires first.
        headersTimeout: rt,
        bodyTimeout: rt,
      },
      handler,
    );
  }
}
