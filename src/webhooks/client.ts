/**
 * WebhookClient: the one component that makes outgoing webhook requests (markup fetches, status
 * callbacks, SMS callbacks). STYLE.md "Outgoing webhooks: serialize once, sign the exact bytes, timeout,
 * bounded retries, fallback URL"; timings from Twilio (benchmarks-and-faults 1c, R10-R12, R17).
 *
 * Built on node:http/https rather than the platform fetch: fetch (undici) has no separate connect
 * timeout per request and no per-request DNS hook without importing undici directly (not a declared
 * dependency); node:http takes a `lookup` function, which is where the SSRF policy checks every resolved
 * address and pins the socket to the checked one (no DNS rebinding between check and connect), and its
 * socket events give a true TCP connect timeout separate from the read and total timeouts.
 */
import { randomUUID } from 'node:crypto';
import { promises as dns } from 'node:dns';
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { Logger } from '../logger.js';
import { storableHeaders, storableText } from '../storable-text.js';
import { encodeForm, type Params, switchboardSignature, twilioSignature } from './signing.js';
import {
  type WebhookErrorCode as Code,
  FailureKind,
  type HttpMethod,
  WebhookErrorCode,
  type WebhookFailure,
  type WebhookNotification,
  type WebhookRequest,
  type WebhookResult,
} from './types.js';
import {
  blockedHostReason,
  blockedReason,
  type ConnectionSettings,
  parseWebhookUrl,
  RetryClass,
  type WebhookTarget,
} from './url-policy.js';

/** Header names we send. */
export const WebhookHeader = {
  TwilioSignature: 'X-Twilio-Signature',
  SwitchboardSignature: 'X-Switchboard-Signature',
  TwilioIdempotency: 'I-Twilio-Idempotency-Token',
  SwitchboardIdempotency: 'X-Switchboard-Idempotency-Token',
} as const;

/** Resolves a host name to every address it has (injectable for tests). */
export type Resolver = (hostname: string) => Promise<ReadonlyArray<{ address: string; family: number }>>;

const defaultResolver: Resolver = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

export interface WebhookClientOptions {
  /** TCP connect timeout per attempt (Twilio `ct`). Default 5,000 ms. */
  readonly connectTimeoutMs?: number;
  /** Idle time allowed while waiting for response bytes (Twilio `rt`). Default 15,000 ms. */
  readonly readTimeoutMs?: number;
  /** Budget for all attempts on one URL, connect time included (Twilio `tt`). Default 15,000 ms. */
  readonly totalTimeoutMs?: number;
  /** Retries after the first attempt on one URL (Twilio `rc`). Default 1. */
  readonly retries?: number;
  /** Failure classes that are retried (Twilio `rp`). Default: connection failures only. */
  readonly retryOn?: readonly RetryClass[];
  /** Refuse loopback and private ranges too (`WEBHOOK_BLOCK_PRIVATE`). Default false. */
  readonly blockPrivate?: boolean;
  /** Response body cap. Default 1 MiB (the markup size cap). */
  readonly maxBodyBytes?: number;
  /** Redirects followed, each policy-checked and re-signed. Default 5; 0 disables. */
  readonly maxRedirects?: number;
  /** Called once per failed attempt with what a Notification record needs. Must not throw. */
  readonly onFailure?: (notification: WebhookNotification) => void;
  readonly logger?: Logger;
  readonly resolver?: Resolver;
  readonly userAgent?: string;
  /** Clock for signature timestamps (ms). */
  readonly now?: () => number;
}

class AttemptError extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    readonly retryClass: RetryClass | null,
  ) {
    super(message);
  }
}

interface AttemptOk {
  readonly ok: true;
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}
interface AttemptFail {
  readonly ok: false;
  readonly kind: FailureKind;
  readonly message: string;
  readonly retryClass: RetryClass | null;
  readonly status?: number;
  readonly headers?: Record<string, string>;
  readonly body?: string;
}
type AttemptResult = AttemptOk | AttemptFail;

const CODE_BY_KIND: Record<FailureKind, Code> = {
  [FailureKind.InvalidUrl]: WebhookErrorCode.InvalidUrl,
  [FailureKind.BlockedByPolicy]: WebhookErrorCode.BadHost,
  [FailureKind.BadHost]: WebhookErrorCode.BadHost,
  [FailureKind.Refused]: WebhookErrorCode.ConnectionFailure,
  [FailureKind.ConnectTimeout]: WebhookErrorCode.ConnectionFailure,
  [FailureKind.Network]: WebhookErrorCode.ConnectionFailure,
  [FailureKind.Timeout]: WebhookErrorCode.RetrievalFailure,
  [FailureKind.HttpStatus]: WebhookErrorCode.RetrievalFailure,
  [FailureKind.TooLarge]: WebhookErrorCode.BodyTooLarge,
  [FailureKind.TooManyRedirects]: WebhookErrorCode.TooManyRedirects,
};

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function flattenHeaders(h: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined) continue;
    out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/** URL for a GET: the parameters appended to any existing query, which is left byte-for-byte as is. */
function withQuery(url: URL, params: Params): URL {
  if (params.length === 0) return new URL(url.href);
  const sep = url.search ? '&' : url.href.endsWith('?') ? '' : '?';
  return new URL(url.href + sep + encodeForm(params));
}

/** The URL with any `user:password@` removed: Notification records are readable by the account's users. */
function withoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    if (!u.username && !u.password) return url;
    u.username = '';
    u.password = '';
    return u.href;
  } catch {
    return url;
  }
}

/** Origin and path only: query strings may carry secrets, so logs never include them. */
function loggable(url: URL | string): string {
  try {
    const u = typeof url === 'string' ? new URL(url) : url;
    return u.origin + u.pathname;
  } catch {
    return '[invalid url]';
  }
}

/**
 * Makes signed webhook requests with Twilio's timeout, retry and fallback semantics. One instance per
 * process (it owns keep-alive agents); `close()` releases them.
 */
export class WebhookClient {
  private readonly defaults: ConnectionSettings;
  private readonly blockPrivate: boolean;
  private readonly maxBodyBytes: number;
  private readonly maxRedirects: number;
  private readonly resolver: Resolver;
  private readonly userAgent: string;
  private readonly now: () => number;
  private readonly httpAgent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  private readonly httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 256 });
  private readonly inFlight = new Set<http.ClientRequest>();
  private closed = false;

  constructor(private readonly options: WebhookClientOptions = {}) {
    this.defaults = {
      connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
      readTimeoutMs: options.readTimeoutMs ?? 15_000,
      totalTimeoutMs: options.totalTimeoutMs ?? 15_000,
      retries: options.retries ?? 1,
      retryOn: options.retryOn ?? [RetryClass.Connect],
    };
    this.blockPrivate = options.blockPrivate ?? false;
    this.maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
    this.maxRedirects = options.maxRedirects ?? 5;
    this.resolver = options.resolver ?? defaultResolver;
    this.userAgent = options.userAgent ?? 'Switchboard-Webhooks/0.1';
    this.now = options.now ?? Date.now;
  }

  /**
   * Releases pooled connections and ends requests in flight (they resolve as a `network` failure, with
   * no retry and no fallback). Later `request()` calls fail the same way. Idempotent.
   */
  close(): void {
    this.closed = true;
    for (const r of this.inFlight)
      r.destroy(new AttemptError(FailureKind.Network, 'webhook client closed', null));
    this.inFlight.clear();
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  /**
   * Sends `req` to its URL (retrying the configured failure classes), then to its fallback URL if the
   * primary failed. Never throws for network conditions: failures come back as a typed result and
   * through `onFailure`.
   */
  async request(req: WebhookRequest): Promise<WebhookResult> {
    const token = req.idempotencyToken ?? randomUUID();
    const fallback = req.fallback ?? null;
    const primary = await this.deliver(req, req.url, req.method, token, fallback !== null, 0);
    if (primary.ok || fallback === null || this.closed) return primary;
    const second = await this.deliver(req, fallback.url, fallback.method, token, false, primary.attempts);
    return { ...second, usedFallback: true };
  }

  private defaultsFor(req: WebhookRequest): ConnectionSettings {
    const t = req.timeouts;
    if (!t) return this.defaults;
    return {
      ...this.defaults,
      connectTimeoutMs: t.connectMs ?? this.defaults.connectTimeoutMs,
      readTimeoutMs: t.readMs ?? this.defaults.readTimeoutMs,
      totalTimeoutMs: t.totalMs ?? this.defaults.totalTimeoutMs,
    };
  }

  private async deliver(
    req: WebhookRequest,
    rawUrl: string,
    method: HttpMethod,
    token: string,
    hasFallback: boolean,
    attemptsBefore: number,
  ): Promise<WebhookResult> {
    const target = parseWebhookUrl(rawUrl, this.defaultsFor(req));
    const base = { method, usedFallback: false, idempotencyToken: token };
    if (!target) {
      const fail: AttemptFail = {
        ok: false,
        kind: FailureKind.InvalidUrl,
        message: 'invalid webhook URL (absolute http or https URL required)',
        retryClass: null,
      };
      this.notify(req, rawUrl, method, token, fail, attemptsBefore + 1, hasFallback ? 'fallback' : 'none');
      return this.failure(fail, { ...base, url: rawUrl, attempts: attemptsBefore });
    }
    if (target.ignoredOverrides.length > 0) {
      this.options.logger?.warn(
        { url: loggable(target.url), ignored: target.ignoredOverrides },
        'webhook URL overrides out of range or unknown; defaults used',
      );
    }
    const deadline = this.now() + target.settings.totalTimeoutMs;
    let attempts = 0;
    for (;;) {
      attempts += 1;
      const remaining = deadline - this.now();
      const result = await this.followRedirects(req, target, method, token, Math.max(remaining, 1));
      const total = attemptsBefore + attempts;
      if (result.ok) {
        return {
          ok: true,
          status: result.status,
          headers: result.headers,
          body: result.body,
          contentType: result.headers['content-type'] ?? null,
          url: result.url,
          method: result.method,
          attempts: total,
          usedFallback: false,
          idempotencyToken: token,
        };
      }
      const canRetry =
        attempts <= target.settings.retries &&
        result.retryClass !== null &&
        target.settings.retryOn.includes(result.retryClass) &&
        deadline - this.now() > 0 &&
        !this.closed;
      const next = canRetry ? 'retry' : hasFallback ? 'fallback' : 'none';
      this.notify(req, result.url, result.method, token, result, total, next);
      if (!canRetry) return this.failure(result, { ...base, url: result.url, attempts: total });
    }
  }

  private failure(
    f: AttemptFail,
    o: { url: string; method: HttpMethod; attempts: number; usedFallback: boolean; idempotencyToken: string },
  ): WebhookFailure {
    return {
      ok: false,
      kind: f.kind,
      errorCode: CODE_BY_KIND[f.kind],
      message: f.message,
      ...(f.status === undefined ? {} : { status: f.status }),
      ...(f.headers === undefined ? {} : { headers: f.headers }),
      ...(f.body === undefined ? {} : { body: f.body }),
      ...o,
    };
  }

  private notify(
    req: WebhookRequest,
    url: string,
    method: HttpMethod,
    token: string,
    f: AttemptFail,
    attempt: number,
    next: WebhookNotification['next'],
  ): void {
    const notification: WebhookNotification = {
      accountSid: req.accountSid,
      errorCode: CODE_BY_KIND[f.kind],
      log: next === 'none' ? 0 : 1,
      kind: f.kind,
      messageText: storableText(f.message),
      requestUrl: withoutCredentials(url),
      requestMethod: method,
      requestVariables: encodeForm(req.params),
      responseStatus: f.status ?? null,
      // What the server sent is kept readable and storable (no NUL), never dropped with the record.
      responseHeaders: storableHeaders(f.headers ?? {}),
      responseBody: storableText(f.body ?? ''),
      attempt,
      next,
      idempotencyToken: token,
      context: req.context ?? {},
      at: new Date(this.now()),
    };
    this.options.logger?.warn(
      { url: loggable(url), method, kind: f.kind, errorCode: notification.errorCode, attempt, next },
      'webhook request failed',
    );
    try {
      this.options.onFailure?.(notification);
    } catch (err) {
      this.options.logger?.error({ err }, 'webhook onFailure callback threw');
    }
  }

  /** One attempt, following up to `maxRedirects` policy-checked redirects within `budgetMs`. */
  private async followRedirects(
    req: WebhookRequest,
    target: WebhookTarget,
    method: HttpMethod,
    token: string,
    budgetMs: number,
  ): Promise<AttemptResult & { url: string; method: HttpMethod }> {
    const until = this.now() + budgetMs;
    let url = target.url;
    let m = method;
    for (let hop = 0; ; hop++) {
      const sentUrl = m === 'GET' ? withQuery(url, req.params) : url;
      const r = await this.once(req, sentUrl, m, token, target.settings, Math.max(until - this.now(), 1));
      const location = r.ok ? undefined : r.headers?.location;
      if (r.ok || r.kind !== FailureKind.HttpStatus || !REDIRECTS.has(r.status ?? 0) || !location) {
        return { ...r, url: sentUrl.href, method: m };
      }
      if (hop >= this.maxRedirects) {
        return {
          ...r,
          kind: FailureKind.TooManyRedirects,
          message: `more than ${this.maxRedirects} redirects`,
          retryClass: null,
          url: sentUrl.href,
          method: m,
        };
      }
      let nextUrl: URL;
      try {
        nextUrl = new URL(location, url);
      } catch {
        return { ...r, message: 'redirect with an invalid Location', url: sentUrl.href, method: m };
      }
      if (nextUrl.protocol !== 'http:' && nextUrl.protocol !== 'https:') {
        return { ...r, message: 'redirect to a non-http URL', url: sentUrl.href, method: m };
      }
      nextUrl.hash = '';
      // 307/308 keep the method and body; 301/302/303 continue as GET with the variables in the query.
      if (r.status !== 307 && r.status !== 308) m = 'GET';
      url = nextUrl;
    }
  }

  /** Checks an IP-literal host against the policy; host names are checked in `lookup`. */
  private precheck(url: URL): AttemptFail | null {
    const hostReason = blockedHostReason(url.hostname);
    if (hostReason)
      return { ok: false, kind: FailureKind.BlockedByPolicy, message: hostReason, retryClass: null };
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) !== 0) {
      const reason = blockedReason(host, { blockPrivate: this.blockPrivate });
      if (reason) return { ok: false, kind: FailureKind.BlockedByPolicy, message: reason, retryClass: null };
    }
    return null;
  }

  private lookupFn(): LookupFunction {
    return (hostname, options, callback) => {
      const done = callback as (
        err: NodeJS.ErrnoException | null,
        address: string | Array<{ address: string; family: number }>,
        family?: number,
      ) => void;
      this.resolver(hostname).then(
        (addresses) => {
          if (addresses.length === 0) {
            const e: NodeJS.ErrnoException = new Error(`no address for ${hostname}`);
            e.code = 'ENOTFOUND';
            done(e, '');
            return;
          }
          for (const a of addresses) {
            const reason = blockedReason(a.address, { blockPrivate: this.blockPrivate });
            if (reason) {
              const e: NodeJS.ErrnoException = new Error(`${hostname}: ${reason}`);
              e.code = 'E_WEBHOOK_POLICY';
              done(e, '');
              return;
            }
          }
          // Pin to the first checked address: the socket connects to exactly what was checked.
          const first = addresses[0]!;
          if (options.all) done(null, [{ address: first.address, family: first.family }]);
          else done(null, first.address, first.family);
        },
        (err: NodeJS.ErrnoException) => done(err, ''),
      );
    };
  }

  private once(
    req: WebhookRequest,
    url: URL,
    method: HttpMethod,
    token: string,
    settings: ConnectionSettings,
    budgetMs: number,
  ): Promise<AttemptResult> {
    if (this.closed) {
      return Promise.resolve({
        ok: false,
        kind: FailureKind.Network,
        message: 'webhook client closed',
        retryClass: null,
      });
    }
    const blocked = this.precheck(url);
    if (blocked) return Promise.resolve(blocked);
    // Serialise once; both signatures cover exactly these bytes / this URL.
    const body = method === 'POST' ? Buffer.from(encodeForm(req.params), 'utf8') : null;
    const t = Math.floor(this.now() / 1000);
    // Signed as the receiver reconstructs it (scheme, host, path, query): URL credentials are not part of it.
    const signedUrl = withoutCredentials(url.href);
    const headers: Record<string, string> = {
      'User-Agent': this.userAgent,
      Accept: 'text/xml, application/xml, text/plain, */*',
      [WebhookHeader.TwilioSignature]: twilioSignature(
        req.authToken,
        signedUrl,
        method === 'POST' ? req.params : [],
      ),
      [WebhookHeader.SwitchboardSignature]: switchboardSignature(req.authToken, t, body ?? signedUrl),
      [WebhookHeader.TwilioIdempotency]: token,
      [WebhookHeader.SwitchboardIdempotency]: token,
    };
    if (body) {
      headers['Content-Type'] = 'application/x-www-form-urlencoded; charset=utf-8';
      headers['Content-Length'] = String(body.length);
    }
    const isHttps = url.protocol === 'https:';
    const mod = isHttps ? https : http;
    return new Promise<AttemptResult>((resolve) => {
      let settled = false;
      let status: number | undefined;
      let resHeaders: Record<string, string> | undefined;
      const timers: NodeJS.Timeout[] = [];
      const finish = (result: AttemptResult) => {
        if (settled) return;
        settled = true;
        this.inFlight.delete(r);
        for (const tm of timers) clearTimeout(tm);
        resolve(result);
      };
      const fail = (kind: FailureKind, message: string, retryClass: RetryClass | null, bodyText?: string) =>
        finish({
          ok: false,
          kind,
          message,
          retryClass,
          ...(status === undefined ? {} : { status }),
          ...(resHeaders === undefined ? {} : { headers: resHeaders }),
          ...(bodyText === undefined ? {} : { body: bodyText }),
        });

      const r = mod.request(url, {
        method,
        headers,
        agent: isHttps ? this.httpsAgent : this.httpAgent,
        lookup: this.lookupFn(),
      });
      this.inFlight.add(r);
      timers.push(
        setTimeout(() => {
          r.destroy(
            new AttemptError(
              FailureKind.Timeout,
              `no complete response within ${budgetMs} ms`,
              RetryClass.ReadTimeout,
            ),
          );
        }, budgetMs),
      );
      r.setTimeout(settings.readTimeoutMs, () => {
        r.destroy(
          new AttemptError(
            FailureKind.Timeout,
            `no data for ${settings.readTimeoutMs} ms`,
            RetryClass.ReadTimeout,
          ),
        );
      });
      r.on('socket', (socket) => {
        if (!socket.connecting) return;
        const ct = Math.min(settings.connectTimeoutMs, budgetMs);
        const timer = setTimeout(() => {
          r.destroy(
            new AttemptError(
              FailureKind.ConnectTimeout,
              `connect timeout after ${ct} ms`,
              RetryClass.Connect,
            ),
          );
        }, ct);
        timers.push(timer);
        socket.once('connect', () => clearTimeout(timer));
      });
      r.on('error', (err: NodeJS.ErrnoException) => {
        if (err instanceof AttemptError) return fail(err.kind, err.message, err.retryClass);
        switch (err.code) {
          case 'E_WEBHOOK_POLICY':
            return fail(FailureKind.BlockedByPolicy, err.message, null);
          case 'ENOTFOUND':
          case 'EAI_AGAIN':
          case 'EAI_FAIL':
          case 'EAI_NONAME':
            return fail(FailureKind.BadHost, `cannot resolve ${url.hostname}`, RetryClass.Connect);
          case 'ECONNREFUSED':
            return fail(FailureKind.Refused, `connection refused by ${url.host}`, RetryClass.Connect);
          default:
            // Reset/closed before any response counts as a connection failure (retryable as `ct`).
            return fail(
              FailureKind.Network,
              `${err.code ?? 'error'}: ${err.message}`,
              status === undefined ? RetryClass.Connect : null,
            );
        }
      });
      r.on('response', (res) => {
        status = res.statusCode ?? 0;
        resHeaders = flattenHeaders(res.headers);
        const chunks: Buffer[] = [];
        let size = 0;
        const declared = Number(res.headers['content-length'] ?? Number.NaN);
        if (declared > this.maxBodyBytes) {
          res.destroy();
          r.destroy();
          return fail(
            FailureKind.TooLarge,
            `response body of ${declared} bytes exceeds ${this.maxBodyBytes}`,
            null,
          );
        }
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > this.maxBodyBytes) {
            const kept = Buffer.concat(chunks).toString('utf8');
            res.destroy();
            r.destroy();
            fail(FailureKind.TooLarge, `response body exceeds ${this.maxBodyBytes} bytes`, null, kept);
            return;
          }
          chunks.push(chunk);
        });
        // The peer closed the connection mid-body: a network failure after a response started (not retried).
        res.on('error', (err: Error) => {
          const e = err instanceof AttemptError ? err : null;
          fail(
            e?.kind ?? FailureKind.Network,
            e?.message ?? `response aborted: ${err.message}`,
            e?.retryClass ?? null,
          );
        });
        res.on('close', () => {
          if (!res.complete) fail(FailureKind.Network, 'response aborted before the end of the body', null);
        });
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const code = status ?? 0;
          if (code >= 200 && code < 300) {
            finish({ ok: true, status: code, headers: resHeaders ?? {}, body: text });
            return;
          }
          const cls = code >= 500 ? RetryClass.Status5xx : code >= 400 ? RetryClass.Status4xx : null;
          fail(FailureKind.HttpStatus, `HTTP ${code} from ${url.host}`, cls, text);
        });
      });
      r.end(body ?? undefined);
    });
  }
}
