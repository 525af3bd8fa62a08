/**
 * One HTTP exchange of the webhook transport (transport.ts): undici's dispatch handler that reads the
 * response and settles the attempt on one timer for Twilio's connect (`ct`), read (`rt`) and total
 * (`tt`) timeouts, and the classification of what went wrong as data (`AttemptError`).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import { POLICY_REFUSED } from './connect-policy.js';
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

function flattenHeaders(h: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in h) {
    const v = h[k];
    if (v === undefined) continue;
    out[k] = typeof v === 'string' ? v : v.join(', ');
  }
  return out;
}

/** No response byte within the read timeout (before the head, or between body chunks). */
const readTimedOut = (readTimeoutMs: number) =>
  new AttemptError(FailureKind.Timeout, `no data for ${readTimeoutMs} ms`, RetryClass.ReadTimeout);

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
      return readTimedOut(timeouts.readTimeoutMs);
    default:
      // Reset/closed before any response counts as a connection failure (retryable as `ct`).
      return new AttemptError(FailureKind.Network, `${code ?? 'error'}: ${e.message}`, RetryClass.Connect);
  }
}

/** A failure while the body streams in: not retried, except a stall (the read timeout). */
function duringBody(err: unknown, timeouts: ExchangeTimeouts): AttemptError {
  if (err instanceof AttemptError) return err;
  const e: NodeJS.ErrnoException = err instanceof Error ? err : new Error(String(err));
  if (e.code === 'UND_ERR_BODY_TIMEOUT') return readTimedOut(timeouts.readTimeoutMs);
  // The peer closed the connection mid-body: a network failure after a response started.
  return new AttemptError(FailureKind.Network, `response aborted: ${e.message}`, null);
}

const Phase = {
  /** Dispatched, not yet on a connected socket: the connect timeout applies. */
  Connect: 0,
  /** On a socket: the read timeout applies from the last response byte. */
  Read: 1,
  Settled: 2,
} as const;
type Phase = (typeof Phase)[keyof typeof Phase];

/**
 * One exchange: undici's dispatch handler (the response is read here, without the Readable stream,
 * abort signal and promise `request()` makes for every exchange) and its timeouts on one timer. The
 * timer never fires after the first deadline due (the budget, the connect timeout while connecting,
 * the read timeout from the last response byte after); when it fires it fails the attempt for the
 * deadline that passed or is set again for the next one, so response bytes move a deadline without
 * touching the timer. One object per exchange, no closures.
 */
export class Exchange implements Dispatcher.DispatchHandler {
  private phase: Phase = Phase.Connect;
  private status: number | undefined;
  private headers: Record<string, string> | undefined;
  // undici's handle on the request, from the moment it reaches a connected socket.
  private controller: Dispatcher.DispatchController | null = null;
  private abortReason: AttemptError | null = null;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  /** performance.now() deadlines: the whole exchange, and the connect phase. */
  private readonly budgetEnd: number;
  private readonly connectEnd: number;
  /** performance.now() of the last progress in the read phase (on a socket, response bytes). */
  private lastRead = 0;
  private timer: NodeJS.Timeout;
  /** performance.now() when `timer` fires. */
  private timerEnd: number;

  constructor(
    private readonly url: URL,
    private readonly timeouts: ExchangeTimeouts,
    private readonly maxBody: number,
    private readonly inFlight: Set<Exchange>,
    private readonly resolve: (result: AttemptResult) => void,
  ) {
    const now = performance.now();
    const { budgetMs } = timeouts;
    this.budgetEnd = now + budgetMs;
    // A connect timeout at or past the budget is the budget's (its message and retry class).
    this.connectEnd =
      timeouts.connectTimeoutMs < budgetMs ? now + timeouts.connectTimeoutMs : Number.POSITIVE_INFINITY;
    const first = Math.min(timeouts.connectTimeoutMs, budgetMs);
    this.timerEnd = now + first;
    this.timer = setTimeout(onTimer, first, this);
  }

  /** The timer fired: fail for the deadline that passed, or re-arm for the next one. */
  expire(): void {
    if (this.phase === Phase.Settled) return;
    // Timers run on the loop's millisecond clock: a deadline within a millisecond counts as passed.
    const now = performance.now() + 1;
    if (now >= this.budgetEnd) {
      this.stop(
        new AttemptError(
          FailureKind.Timeout,
          `no complete response within ${this.timeouts.budgetMs} ms`,
          RetryClass.ReadTimeout,
        ),
      );
      return;
    }
    if (this.phase === Phase.Connect) {
      if (now >= this.connectEnd) {
        const ct = this.timeouts.connectTimeoutMs;
        this.stop(
          new AttemptError(FailureKind.ConnectTimeout, `connect timeout after ${ct} ms`, RetryClass.Connect),
        );
        return;
      }
      this.arm(Math.min(this.connectEnd, this.budgetEnd) - now + 1);
      return;
    }
    const rt = this.timeouts.readTimeoutMs;
    if (now >= this.lastRead + rt) {
      this.stop(readTimedOut(rt));
      return;
    }
    this.arm(Math.min(this.lastRead + rt, this.budgetEnd) - now + 1);
  }

  /** Replaces the timer with one firing in `ms`. */
  private arm(ms: number): void {
    clearTimeout(this.timer);
    const after = Math.max(Math.ceil(ms), 1);
    this.timerEnd = performance.now() + after;
    this.timer = setTimeout(onTimer, after, this);
  }

  /** Settles the attempt once. */
  private finish(result: AttemptResult): void {
    if (this.phase === Phase.Settled) return;
    this.phase = Phase.Settled;
    clearTimeout(this.timer);
    this.inFlight.delete(this);
    this.resolve(result);
  }

  private fail(err: AttemptError, bodyText?: string): void {
    const { status, headers } = this;
    this.finish({
      ok: false,
      kind: err.kind,
      message: err.message,
      retryClass: err.retryClass,
      ...(status === undefined ? {} : { status }),
      ...(headers === undefined ? {} : { headers }),
      ...(bodyText === undefined ? {} : { body: bodyText }),
    });
  }

  /** Settles now and cancels the undici request (at once, or as soon as it reaches a socket). */
  stop(err: AttemptError, bodyText?: string): void {
    this.fail(err, bodyText);
    this.abortReason ??= err;
    this.controller?.abort(err);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.abortReason) {
      controller.abort(this.abortReason);
      return;
    }
    // The request reached a connected socket: the connect phase is over, the read timeout starts.
    if (this.phase !== Phase.Connect) return;
    this.phase = Phase.Read;
    const now = performance.now();
    this.lastRead = now;
    // The timer set for the connect phase serves while it fires no later than the read deadline
    // (with the defaults it does: ct 5 s, rt 15 s), so most exchanges make one timer.
    const readEnd = Math.min(now + this.timeouts.readTimeoutMs, this.budgetEnd);
    if (readEnd < this.timerEnd) this.arm(readEnd - now);
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    responseHeaders: IncomingHttpHeaders,
  ): void {
    if (this.phase === Phase.Settled) {
      controller.abort(this.abortReason ?? new AttemptError(FailureKind.Network, 'abandoned', null));
      return;
    }
    this.lastRead = performance.now();
    this.status = statusCode;
    const headers = flattenHeaders(responseHeaders);
    this.headers = headers;
    const declared = Number(headers['content-length'] ?? Number.NaN);
    if (declared > this.maxBody) {
      this.stop(
        new AttemptError(
          FailureKind.TooLarge,
          `response body of ${declared} bytes exceeds ${this.maxBody}`,
          null,
        ),
      );
    }
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.phase === Phase.Settled) return;
    this.lastRead = performance.now();
    this.size += chunk.length;
    if (this.size > this.maxBody) {
      const kept = Buffer.concat(this.chunks).toString('utf8');
      this.stop(
        new AttemptError(FailureKind.TooLarge, `response body exceeds ${this.maxBody} bytes`, null),
        kept,
      );
      return;
    }
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.phase === Phase.Settled) return;
    const { chunks } = this;
    const text =
      chunks.length === 0
        ? ''
        : (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)).toString('utf8');
    const code = this.status ?? 0;
    if (code >= 200 && code < 300) {
      this.finish({ ok: true, status: code, headers: this.headers ?? {}, body: text });
      return;
    }
    const cls = code >= 500 ? RetryClass.Status5xx : code >= 400 ? RetryClass.Status4xx : null;
    this.fail(new AttemptError(FailureKind.HttpStatus, `HTTP ${code} from ${this.url.host}`, cls), text);
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    if (this.phase === Phase.Settled) return;
    this.fail(
      this.status === undefined
        ? beforeResponse(err, this.url, this.timeouts)
        : duringBody(err, this.timeouts),
    );
  }
}

function onTimer(exchange: Exchange): void {
  exchange.expire();
}
