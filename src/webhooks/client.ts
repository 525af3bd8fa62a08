/**
 * WebhookClient: the one component that makes outgoing webhook requests (markup fetches, status
 * callbacks, SMS callbacks). STYLE.md "Outgoing webhooks: serialize once, sign the exact bytes, timeout,
 * bounded retries, fallback URL"; timings from Twilio (benchmarks-and-faults 1c, R10-R12, R17).
 *
 * This file is the delivery policy: retries within the URL's total timeout, redirects (followed by hand
 * because every hop is policy-checked and re-signed), then the fallback URL. The wire exchange is
 * transport.ts (undici), the request bytes outgoing.ts, the failure records notifications.ts.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../logger.js';
import type { WebhookMeter } from '../metrics/port.js';
import type { Resolver } from './connect-policy.js';
import { failureResult, notificationOf, type Outcome } from './notifications.js';
import { buildRequest, loggable } from './outgoing.js';
import { type AttemptFail, type AttemptResult, WebhookTransport } from './transport.js';
import {
  FailureKind,
  type HttpMethod,
  type WebhookNotification,
  type WebhookRequest,
  type WebhookResult,
} from './types.js';
import { type ConnectionSettings, parseWebhookUrl, RetryClass, type WebhookTarget } from './url-policy.js';

export type { Resolver } from './connect-policy.js';
export { WebhookHeader } from './outgoing.js';

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
  /** Records each `request()`'s latency and failure kind. */
  readonly meter?: WebhookMeter;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Parsed URLs kept at most; the map is emptied when full (a miss costs one parse). */
const TARGETS_MAX = 1_000;

/** One attempt's result with the URL and method of its last hop. */
type HopResult = AttemptResult & { url: string; method: HttpMethod };

/**
 * Makes signed webhook requests with Twilio's timeout, retry and fallback semantics. One instance per
 * process (it owns the keep-alive pool); `close()` releases it.
 */
export class WebhookClient {
  private readonly defaults: ConnectionSettings;
  private readonly maxRedirects: number;
  private readonly userAgent: string;
  private readonly now: () => number;
  private readonly transport: WebhookTransport;
  /**
   * Targets of URLs sent with the default settings, by the URL as given: a status callback URL comes
   * back for every message, and parsing it (and removing its fragment) is a measurable share of a
   * callback. Nothing changes a target once parsed.
   */
  private readonly targets = new Map<string, WebhookTarget | null>();

  constructor(private readonly options: WebhookClientOptions = {}) {
    this.defaults = {
      connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
      readTimeoutMs: options.readTimeoutMs ?? 15_000,
      totalTimeoutMs: options.totalTimeoutMs ?? 15_000,
      retries: options.retries ?? 1,
      retryOn: options.retryOn ?? [RetryClass.Connect],
    };
    this.maxRedirects = options.maxRedirects ?? 5;
    this.userAgent = options.userAgent ?? 'Switchboard-Webhooks/0.1';
    this.now = options.now ?? Date.now;
    this.transport = new WebhookTransport({
      blockPrivate: options.blockPrivate ?? false,
      maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
      maxConnectTimeoutMs: this.defaults.connectTimeoutMs,
      ...(options.resolver ? { resolver: options.resolver } : {}),
    });
  }

  /**
   * Releases pooled connections and ends requests in flight (they resolve as a `network` failure, with
   * no retry and no fallback). Later `request()` calls fail the same way. Idempotent.
   */
  close(): void {
    this.transport.close();
  }

  /**
   * Sends `req` to its URL (retrying the configured failure classes), then to its fallback URL if the
   * primary failed. Never throws for network conditions: failures come back as a typed result and
   * through `onFailure`.
   */
  async request(req: WebhookRequest): Promise<WebhookResult> {
    const meter = this.options.meter;
    if (!meter) return this.deliverWithFallback(req);
    // A monotonic clock: `now` is the signature clock, which tests may fix.
    const started = performance.now();
    const result = await this.deliverWithFallback(req);
    meter.delivered((performance.now() - started) / 1000, result.ok ? null : result.kind);
    return result;
  }

  private async deliverWithFallback(req: WebhookRequest): Promise<WebhookResult> {
    const token = req.idempotencyToken ?? randomUUID();
    const fallback = req.fallback ?? null;
    const primary = await this.deliver(req, req.url, req.method, token, fallback !== null, 0);
    if (primary.ok || fallback === null || this.transport.isClosed) return primary;
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

  private targetOf(req: WebhookRequest, rawUrl: string): WebhookTarget | null {
    const settings = this.defaultsFor(req);
    if (settings !== this.defaults) return parseWebhookUrl(rawUrl, settings);
    let target = this.targets.get(rawUrl);
    if (target === undefined) {
      target = parseWebhookUrl(rawUrl, settings);
      if (this.targets.size >= TARGETS_MAX) this.targets.clear();
      this.targets.set(rawUrl, target);
    }
    return target;
  }

  /** Attempts on one URL: the first, then retries of the configured classes while its total timeout lasts. */
  private async deliver(
    req: WebhookRequest,
    rawUrl: string,
    method: HttpMethod,
    token: string,
    hasFallback: boolean,
    attemptsBefore: number,
  ): Promise<WebhookResult> {
    const target = this.targetOf(req, rawUrl);
    const base = { method, usedFallback: false, idempotencyToken: token };
    if (!target) {
      const fail: AttemptFail = {
        ok: false,
        kind: FailureKind.InvalidUrl,
        message: 'invalid webhook URL (absolute http or https URL required)',
        retryClass: null,
      };
      this.notify(req, fail, {
        url: rawUrl,
        method,
        token,
        attempt: attemptsBefore + 1,
        next: hasFallback ? 'fallback' : 'none',
      });
      return failureResult(fail, { ...base, url: rawUrl, attempts: attemptsBefore });
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
        !this.transport.isClosed;
      const next = canRetry ? 'retry' : hasFallback ? 'fallback' : 'none';
      this.notify(req, result, { url: result.url, method: result.method, token, attempt: total, next });
      if (!canRetry) {
        const outcome: Outcome = { ...base, url: result.url, attempts: total };
        return failureResult(result, outcome);
      }
    }
  }

  private notify(
    req: WebhookRequest,
    f: AttemptFail,
    at: {
      url: string;
      method: HttpMethod;
      token: string;
      attempt: number;
      next: WebhookNotification['next'];
    },
  ): void {
    const notification = notificationOf(req, f, at, new Date(this.now()));
    this.options.logger?.warn(
      {
        url: loggable(at.url),
        method: at.method,
        kind: f.kind,
        errorCode: notification.errorCode,
        attempt: at.attempt,
        next: at.next,
      },
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
  ): Promise<HopResult> {
    const until = this.now() + budgetMs;
    let url = target.url;
    let m = method;
    for (let hop = 0; ; hop++) {
      const out = buildRequest(req, url, m, token, { userAgent: this.userAgent, nowMs: this.now() });
      const r = await this.transport.send(out, {
        connectTimeoutMs: target.settings.connectTimeoutMs,
        readTimeoutMs: target.settings.readTimeoutMs,
        budgetMs: Math.max(until - this.now(), 1),
      });
      const sent = out.url.href;
      const location = r.ok ? undefined : r.headers?.location;
      if (r.ok || r.kind !== FailureKind.HttpStatus || !REDIRECTS.has(r.status ?? 0) || !location) {
        return { ...r, url: sent, method: m };
      }
      if (hop >= this.maxRedirects) {
        return {
          ...r,
          kind: FailureKind.TooManyRedirects,
          message: `more than ${this.maxRedirects} redirects`,
          retryClass: null,
          url: sent,
          method: m,
        };
      }
      let nextUrl: URL;
      try {
        nextUrl = new URL(location, url);
      } catch {
        return { ...r, message: 'redirect with an invalid Location', url: sent, method: m };
      }
      if (nextUrl.protocol !== 'http:' && nextUrl.protocol !== 'https:') {
        return { ...r, message: 'redirect to a non-http URL', url: sent, method: m };
      }
      nextUrl.hash = '';
      // 307/308 keep the method and body; 301/302/303 continue as GET with the variables in the query.
      if (r.status !== 307 && r.status !== 308) m = 'GET';
      url = nextUrl;
    }
  }
}
