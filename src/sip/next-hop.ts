/**
 * Where an outgoing request goes, and whether it may (RFC 3261 §8.1.2, §16.12; RFC 3263): the
 * next hop is the first Route entry if any, else the Request-URI, resolved to addresses over the
 * transports we run; every address passes the target policy (src/security/address-policy.ts).
 * A request to a client's registered flow goes over that flow, through the node that holds it.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Logger } from 'pino';
import * as stack from 'sip';
import { blockedHostReason, blockedReason } from '../security/address-policy.js';
import type { Flow, Target } from './flow.js';
import { type SipRequest, sipUriOf, stackUriOf, wireUri } from './message.js';
import type { SipUri } from './sip-uri.js';
import type { SipTransports } from './transport.js';

export interface SendOptions {
  /** Send over this flow (a registered client's connection) instead of resolving the next hop. */
  readonly flow?: Flow;
  /**
   * The destination was named by a tenant (Dial, a proxy, a gateway, a client's registered Contact):
   * private ranges are refused too when SIP_BLOCK_PRIVATE is on. Other sends (in-dialog requests to
   * a peer's Contact) are held to the always-refused ranges only.
   */
  readonly tenantTarget?: boolean;
}

/**
 * Reaches flows another node holds (flow-relay.ts). Without one every flow is taken as this node's.
 */
export interface FlowRouter {
  isLocal(flow: Flow): boolean;
  /** Puts the Route through the flow's home node first (or finds it there already). */
  routeThrough(rq: SipRequest, flow: Flow): Promise<void>;
}

/** Next-hop selection under the target policy (see the file header). */
export class NextHops {
  private flowRouter: FlowRouter | null = null;

  constructor(
    private readonly transports: SipTransports,
    /** Refuse loopback and private next hops of tenant-named destinations too (SIP_BLOCK_PRIVATE). */
    private readonly blockPrivate: boolean | undefined,
    private readonly log: Logger,
  ) {}

  useFlowRouter(router: FlowRouter): void {
    this.flowRouter = router;
  }

  /** Whether this node holds the flow's connection (always, without a flow router). */
  holdsFlow(flow: Flow): boolean {
    return this.flowRouter?.isLocal(flow) ?? true;
  }

  /**
   * Why the target policy refuses the next hop of a request to `requestUri` (through `route`), or
   * null when it may be contacted (or cannot be resolved: sending it then fails on its own).
   */
  async checkDestination(requestUri: string, route: readonly string[] = []): Promise<string | null> {
    const rq = {
      method: 'OPTIONS',
      uri: requestUri,
      headers: route.length ? { route: route.map((uri) => ({ uri, params: {} })) } : {},
    } as unknown as SipRequest;
    const refused = await new Promise<string | undefined>((resolve) =>
      this.targets(rq, { tenantTarget: true }, (_targets, r) => resolve(r)),
    );
    if (refused) return refused;
    // The system resolver too (hosts file, search domains): a name that SIP resolution cannot find
    // today may still be one that points into a refused range.
    const host = sipUriOf(route[0] ?? requestUri)?.host;
    if (!host || isIP(host)) return null;
    const addresses = await lookup(host, { all: true }).catch(() => []);
    for (const a of addresses) {
      const reason = this.checkHost(a.address);
      if (reason) return `${host}: ${reason}`;
    }
    return null;
  }

  /**
   * The target policy on a host as written, before any resolution: a literal address is judged as
   * it is (even where resolution would find no usable transport), a name only by the metadata names.
   */
  checkHost(hostText: string, tenantTarget = true): string | null {
    const host = hostText.replace(/^\[|\]$/g, '');
    return isIP(host)
      ? blockedReason(host, { blockPrivate: (tenantTarget && this.blockPrivate) ?? false })
      : blockedHostReason(host);
  }

  /**
   * Next-hop addresses (RFC 3261 §8.1.2, §16.12): the first Route entry if any (a strict router's
   * URI swaps into the Request-URI), else the Request-URI; then RFC 3263 resolution, keeping only
   * transports we run. Every resolved address passes the target policy, or the request is refused
   * (`refused` says why): a name that resolves to one blocked address is refused as a whole, as for
   * webhooks. A flow (a client's own connection) is not a destination anyone chose, so it is not checked.
   */
  targets(
    rq: SipRequest,
    options: SendOptions,
    done: (targets: (Target | Flow)[], refused?: string) => void,
  ): void {
    // The callback runs from DNS resolution: nothing it throws may reach the event loop.
    const finish = (targets: (Target | Flow)[], refused?: string) => {
      try {
        done(targets, refused);
      } catch (err) {
        this.log.error({ err, method: rq.method }, 'sip send failed');
      }
    };
    if (options.flow) {
      const router = this.flowRouter;
      if (router && !router.isLocal(options.flow)) {
        // Another node holds the connection: send through it, by the Route now on the request.
        router.routeThrough(rq, options.flow).then(
          () => this.targets(rq, {}, done),
          (err) => {
            this.log.warn({ err, method: rq.method }, 'sip flow route failed');
            finish([]);
          },
        );
        return;
      }
      finish(this.transports.isOpen(options.flow) ? [options.flow] : []);
      return;
    }
    let hop: SipUri | undefined = sipUriOf(rq.uri);
    const route = rq.headers.route;
    if (route?.length) {
      const first = route[0];
      const uri = first ? sipUriOf(first.uri) : undefined;
      if (first && uri && !('lr' in uri.params)) {
        route.shift();
        route.push({ uri: rq.uri, params: {} });
        rq.uri = wireUri(first.uri);
      }
      hop = uri;
    }
    if (!hop?.host) {
      finish([]);
      return;
    }
    const policy = { blockPrivate: (options.tenantTarget && this.blockPrivate) ?? false };
    const byName = this.checkHost(hop.host, options.tenantTarget ?? false);
    if (byName) {
      finish([], byName);
      return;
    }
    const available = new Set<string>();
    const b = this.transports.bound;
    if (b.udp !== null) available.add('UDP');
    if (b.tcp !== null) available.add('TCP');
    try {
      stack.resolve(stackUriOf(hop), (addresses) => {
        const usable = addresses.filter(
          (a) =>
            available.has(a.protocol.toUpperCase()) &&
            Number.isInteger(a.port) &&
            a.port > 0 &&
            a.port < 65_536,
        );
        for (const a of usable) {
          const refused = blockedReason(a.address, policy);
          if (refused) return finish([], refused);
        }
        finish(usable);
      });
    } catch {
      finish([]);
    }
  }
}
