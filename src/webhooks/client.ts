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
import type { AttemptFail, AttemptResult } from './exchange.js';
import { failureResult, notificationOf, type Outcome } from './notifications.js';
import { buildRequest, type Destination, destinationOf, loggable } from './outgoing.js';
import { WebhookTransport } from './transport.js';
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

/** A parsed webhook URL and what its requests need from it. */
interface Route {
  readonly target: WebhookTarget;
  readonly to: Destination;
}

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
  private readonly targets = new Map<string, Route | null>();

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
    // A monotonic clock: `now` is the signature clock, which tests may fix.
    const started = meter ? performance.now() : 0;
    const token = req.idempotencyToken ?? randomUUID();
    const fallback = req.fallback ?? null;
    let result = await this.deliver(req, req.url, req.method, token, fallback !== null, 0);
    if (!result.ok && fallback !== null && !this.transport.isClosed) {
      const second = await this.deliver(req, fallback.url, fallback.method, token, false, result.attempts);
      result = { ...second, usedFallback: true };
    }
    meter?.delivered((performance.now() - started) / 1000, result.ok ? null : result.kind);
    return result;
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

  private routeOf(req: WebhookRequest, rawUrl: string): Route | null {
    const settings = this.defaultsFor(req);
    if (settings !== this.defaults) return routeTo(parseWebhookUrl(rawUrl, settings));
    let route = this.targets.get(rawUrl);
    if (route === undefined) {
      route = routeTo(parseWebhookUrl(rawUrl, settings));
      if (this.targets.size >= TARGETS_MAX) this.targets.clear();
      this.targets.set(rawUrl, route);
    }
    return route;
  }

  /**
   * Attempts on one URL: the first, then retries of the configured classes while its total timeout
   * lasts. Each attempt follows up to `maxRedirects` policy-checked, re-signed redirects.
   */
  private async deliver(
    req: WebhookRequest,
    rawUrl: string,
    method: HttpMethod,
    token: string,
    hasFallback: boolean,
    attemptsBefore: number,
  ): Promise<WebhookResult> {
    const route = this.routeOf(req, rawUrl);
    if (!route) {
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
      const outcome = {
        method,
        usedFallback: false,
        idempotencyToken: token,
        url: rawUrl,
        attempts: attemptsBefore,
      };
      return failureResult(fail, outcome);
    }
    const { target } = route;
    if (target.ignoredOverrides.length > 0) {
      this.options.logger?.warn(
        { url: loggable(target.url), ignored: target.ignoredOverrides },
        'webhook URL overrides out of range or unknown; defaults used',
      );
    }
    const { settings } = target;
    const deadline = this.now() + settings.totalTimeoutMs;
    let attempts = 0;
    for (;;) {
      attempts += 1;
      const remaining = deadline - this.now();
      const until = this.now() + Math.max(remaining, 1);
      // One attempt: the first hop, then each redirect.
      let to = route.to;
      let m = method;
      let sent: Destination;
      let result: AttemptResult;
      for (let hop = 0; ; hop++) {
        const out = buildRequest(req, to, m, token, { userAgent: this.userAgent, nowMs: this.now() });
        const r = await this.transport.send(out, {
          connectTimeoutMs: settings.connectTimeoutMs,
          readTimeoutMs: settings.readTimeoutMs,
          budgetMs: Math.max(until - this.now(), 1),
        });
        sent = out.to;
        const next = r.ok ? null : this.redirect(r, to.url, hop);
        if (next === null || !(next instanceof URL)) {
          result = next ?? r;
          break;
        }
        // 307/308 keep the method and body; 301/302/303 continue as GET with the variables in the query.
        if (r.status !== 307 && r.status !== 308) m = 'GET';
        to = destinationOf(next);
      }
      const total = attemptsBefore + attempts;
      if (result.ok) {
        return {
          ok: true,
          status: result.status,
          headers: result.headers,
          body: result.body,
          contentType: result.headers['content-type'] ?? null,
          url: sent.href,
          method: m,
          attempts: total,
          usedFallback: false,
          idempotencyToken: token,
        };
      }
      const canRetry =
        attempts <= settings.retries &&
        result.retryClass !== null &&
        settings.retryOn.includes(result.retryClass) &&
        deadline - this.now() > 0 &&
        !this.transport.isClosed;
      const next = canRetry ? 'retry' : hasFallback ? 'fallback' : 'none';
      this.notify(req, result, { url: sent.href, method: m, token, attempt: total, next });
      if (!canRetry) {
        // The method asked for, the URL of the last hop.
        const outcome: Outcome = {
          method,
          usedFallback: false,
          idempotencyToken: token,
          url: sent.href,
          attempts: total,
        };
        return failureResult(result, outcome);
      }
    }
  }

  /**
   * Where a failed hop to `from` redirects: the next URL; a failure when the redirect cannot be
   * followed (too many, an invalid or non-http Location); null when the response is no redirect.
   */
  private redirect(r: AttemptFail, from: URL, hop: number): URL | AttemptFail | null {
    const location = r.headers?.location;
    if (r.kind !== FailureKind.HttpStatus || !REDIRECTS.has(r.status ?? 0) || !location) return null;
    if (hop >= this.maxRedirects) {
      return {
        ...r,
        kind: FailureKind.TooManyRedirects,
        message: `more than ${this.maxRedirects} redirects`,
        retryClass: null,
      };
    }
    let nextUrl: URL;
    try {
      nextUrl = new URL(location, from);
    } catch {
      return { ...r, message: 'redirect with an invalid Location' };
    }
    if (nextUrl.protocol !== 'http:' && nextUrl.protocol !== 'https:') {
      return { ...r, message: 'redirect to a non-http URL' };
    }
    nextUrl.hash = '';
    return nextUrl;
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
}

function routeTo(target: WebhookTarget | null): Route | null {
  return target && { target, to: destinationOf(target.url) };
}
