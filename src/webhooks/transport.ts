/**
 * The HTTP exchange under the webhook client: one undici `Agent` (keep-alive pool per origin) whose
 * connector resolves every host name through the address policy, and a timer per request for Twilio's
 * connect (`ct`), read (`rt`) and total (`tt`) timeouts. One `send()` is one request and one response,
 * read up to the body cap; retries, redirects and fallback belong to the client above.
 *
 * Why the connect and read timers are ours and not the Agent's: `ct` is per URL (the `#ct=` fragment)
 * while the connector's timeout is per Agent; undici can cancel a request only once it reaches a connected
 * socket; and its headers/body timeouts tick on a ~1 s clock, too coarse for `rt=100`. So the attempt
 * settles on a native timer driven by the request's progress (the dispatch handler, `Exchange`), and
 * undici's own timeouts only reap what an abandoned attempt leaves behind.
 */
import { Agent } from 'undici';
import { defaultResolver, policyLookup, type Resolver, refusedTarget } from './connect-policy.js';
import { AttemptError, type AttemptResult, Exchange, type ExchangeTimeouts } from './exchange.js';
import type { OutgoingRequest } from './outgoing.js';
import { FailureKind } from './types.js';

export interface TransportOptions {
  readonly blockPrivate: boolean;
  readonly maxBodyBytes: number;
  readonly resolver?: Resolver;
  /** Longest connect timeout a request may ask for; the Agent drops connection attempts after it. */
  readonly maxConnectTimeoutMs: number;
}

/** Highest `ct` a URL fragment may set (url-policy.ts ranges). */
const FRAGMENT_MAX_CONNECT_MS = 10_000;
/** Host names whose pre-connection verdict is kept; the map is emptied when full. */
const HOST_VERDICTS_MAX = 1_000;

/** Makes policy-checked HTTP exchanges over one pooled undici Agent. `close()` ends them all. */
export class WebhookTransport {
  private readonly agent: Agent;
  private readonly inFlight = new Set<Exchange>();
  private readonly hostVerdicts = new Map<string, string | null>();
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
    for (const exchange of [...this.inFlight]) exchange.stop(closing);
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
    const { to } = request;
    const refused = this.refusedHost(to.url);
    if (refused) {
      return Promise.resolve({
        ok: false,
        kind: FailureKind.BlockedByPolicy,
        message: refused,
        retryClass: null,
      });
    }
    return new Promise<AttemptResult>((resolve) => {
      const exchange = new Exchange(to.url, timeouts, this.options.maxBodyBytes, this.inFlight, resolve);
      this.inFlight.add(exchange);
      this.agent.dispatch(
        {
          origin: to.origin,
          path: to.path,
          method: request.method,
          headers: request.headers,
          body: request.body,
          // Backstops on undici's coarse clock; the exchange's own timer fires first.
          headersTimeout: timeouts.readTimeoutMs,
          bodyTimeout: timeouts.readTimeoutMs,
        },
        exchange,
      );
    });
  }

  /**
   * `refusedTarget` of the URL's host, remembered by host name: the verdict depends on the name alone
   * (and the fixed policy), and the same few hosts come back for every request. Bounded.
   */
  private refusedHost(url: URL): string | null {
    const host = url.hostname;
    let verdict = this.hostVerdicts.get(host);
    if (verdict === undefined) {
      verdict = refusedTarget(url, { blockPrivate: this.options.blockPrivate });
      if (this.hostVerdicts.size >= HOST_VERDICTS_MAX) this.hostVerdicts.clear();
      this.hostVerdicts.set(host, verdict);
    }
    return verdict;
  }
}
