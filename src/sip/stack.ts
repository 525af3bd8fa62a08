/**
 * The SIP stack: our transports + the `sip` package's transaction layer. Raw messages are checked
 * (validate.ts) before parsing; requests get their server transaction, then generic checks
 * (Max-Forwards → 483, Request-URI scheme → 416, Require → 420), then the one request handler.
 * Outgoing requests pick their next hop from the Route set or the Request-URI (RFC 3261 §8.1.2),
 * resolve it (RFC 3263 via the package), and fall through addresses on 503 or transport errors.
 *
 * Guarantees: nothing a socket delivers throws out of here; every outgoing request's callback gets
 * exactly one final response (a local 408/503 when the network gives none).
 */

import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Logger } from 'pino';
import type { StackMessage, TransactionLayer } from 'sip';
import * as stack from 'sip';
import { blockedHostReason, blockedReason } from '../security/address-policy.js';
import {
  cloneMessage,
  isRequest,
  makeResponse,
  newBranch,
  ReasonPhrase,
  type SipRequest,
  type SipResponse,
  sipUriOf,
  stackUriOf,
  wireUri,
} from './message.js';
import { RecentReplies } from './recent-replies.js';
import { type SipUri, uriScheme } from './sip-uri.js';
import {
  type Flow,
  type SipConnection,
  SipTransports,
  type Target,
  type TransportOptions,
} from './transport.js';
import { statelessResponse, validateRaw } from './validate.js';

export type RequestHandler = (rq: SipRequest, flow: Flow) => void;

export interface StackOptions extends TransportOptions {
  /**
   * Refuse loopback and private next hops too (SIP_BLOCK_PRIVATE). Link-local and metadata
   * addresses are refused whatever this says (src/security/address-policy.ts).
   */
  readonly blockPrivate?: boolean;
}

/** Local final status for a request whose next hop the target policy refuses. */
export const FORBIDDEN_DESTINATION = { status: 403, reason: 'Forbidden Destination' } as const;

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

/** Option tags we support in Require (none beyond the base spec yet). */
const SUPPORTED_EXTENSIONS = new Set<string>([]);
const SUPPORTED_SCHEMES = new Set(['sip', 'sips', 'tel']);
/**
/**
 * Requests answered without a server transaction, as Kamailio's registrar answers (sl): only the
 * final answer's bytes are kept a few seconds for retransmissions (RecentReplies), not a
 * transaction object with its timers for the 32 s of Timer J. At thousands of REGISTERs a second
 * those transactions were most of the heap and of the garbage collector's pauses.
 */
const STATELESS_METHODS = new Set(['REGISTER']);
/**
 * INVITE bodies we read (others → 415 with Accept, RFC 3261 §21.4.13): session descriptions, and
 * USSD (3GPP TS 24.390), whose sessions SipLegs hands to the USSD runtime.
 */
const SESSION_TYPES = new Set(['application/sdp', 'application/vnd.3gpp.ussd+xml']);

/** An INVITE (or other request) in flight. */
export interface ClientRequest {
  /** The request as sent (its top Via carries the transaction's branch once sent). */
  readonly sent: SipRequest;
  /** CANCELs an INVITE; without effect once a final response arrived. */
  cancel(): void;
}

/**
 * Reaches flows another node holds (flow-relay.ts). Without one every flow is taken as this node's.
 */
export interface FlowRouter {
  isLocal(flow: Flow): boolean;
  /** Puts the Route through the flow's home node first (or finds it there already). */
  routeThrough(rq: SipRequest, flow: Flow): Promise<void>;
}

export interface StackCounters {
  received: number;
  rejected: number;
  dropped: number;
  handlerErrors: number;
}

export class SipStack {
  readonly transports: SipTransports;
  private readonly layer: TransactionLayer;
  private handler: RequestHandler = (rq) => this.respond(rq, 503);
  private flowRouter: FlowRouter | null = null;
  /** Where to answer a request that has no server transaction (STATELESS_METHODS). */
  private readonly statelessReplies = new WeakMap<SipRequest, { flow: Flow; key: string | null }>();
  private readonly recentReplies = new RecentReplies();
  readonly counters: StackCounters = { received: 0, rejected: 0, dropped: 0, handlerErrors: 0 };

  constructor(
    private readonly options: StackOptions,
    private readonly log: Logger,
  ) {
    this.transports = new SipTransports(options, (raw, flow) => this.onRaw(raw, flow), log);
    this.layer = stack.makeTransactionLayer({}, () => {
      throw new Error('unused');
    });
  }

  /** The advertised host (Via, Contact, SDP origin). */
  get host(): string {
    return this.options.publicAddress;
  }
  get port(): number {
    return this.transports.sipPort;
  }

  onRequest(handler: RequestHandler): void {
    this.handler = handler;
  }

  useFlowRouter(router: FlowRouter): void {
    this.flowRouter = router;
  }

  /** Whether this node holds the flow's connection (always, without a flow router). */
  holdsFlow(flow: Flow): boolean {
    return this.flowRouter?.isLocal(flow) ?? true;
  }

  start() {
    return this.transports.start();
  }

  async close(): Promise<void> {
    this.layer.destroy();
    await this.transports.close();
  }

  // ---- incoming -------------------------------------------------------------------------------

  private onRaw(datagram: string, flow: Flow): void {
    this.counters.received++;
    // A datagram ends the message: a missing blank line after the headers is implied (RFC 4475 baddn).
    const raw =
      flow.protocol === 'UDP' && !datagram.includes('\r\n\r\n')
        ? `${datagram}${datagram.endsWith('\r\n') ? '\r\n' : '\r\n\r\n'}`
        : datagram;
    const verdict = validateRaw(raw, flow.protocol === 'UDP');
    if (verdict.kind === 'drop') {
      this.counters.dropped++;
      this.log.debug({ reason: verdict.reason, from: flow.address }, 'sip message dropped');
      return;
    }
    if (verdict.kind === 'reject') {
      this.counters.rejected++;
      const text = statelessResponse(raw, verdict.status, verdict.reason);
      this.log.debug(
        { status: verdict.status, reason: verdict.reason, from: flow.address },
        'sip request rejected',
      );
      if (text && !/^ACK /.test(raw.replace(/^(?:\r\n)+/, ''))) this.transports.sendRaw(flow, text);
      return;
    }
    const m = stack.parse(raw);
    if (!m || !m.headers?.via?.length || !m.headers.cseq || !m.headers['call-id']) {
      this.counters.dropped++;
      return;
    }
    this.transports.countWire('in', m);
    if (isRequest(m)) this.onRequestMessage(m, flow);
    else this.onResponseMessage(m as SipResponse);
  }

  private onResponseMessage(rs: SipResponse): void {
    const t = this.layer.getClient(rs);
    if (t) t.message(rs, true);
  }

  private onRequestMessage(rq: SipRequest, flow: Flow): void {
    const via = rq.headers.via[0];
    if (via) {
      via.params.received = flow.address;
      if ('rport' in via.params) via.params.rport = String(flow.port);
    }
    const existing = this.layer.getServer(rq);
    if (existing) {
      existing.message(rq, flow);
      return;
    }
    if (rq.method === 'ACK') {
      this.dispatch(rq, flow);
      return;
    }
    const cn = this.transports.get(flow);
    if (!cn) return;
    if (STATELESS_METHODS.has(rq.method)) {
      const key = RecentReplies.keyOf(rq, flow);
      const seen = key === null ? null : this.recentReplies.begin(key);
      if (seen?.kind === 'pending') return;
      if (seen?.kind === 'answered') return void this.transports.sendRaw(flow, seen.text);
      this.statelessReplies.set(rq, { flow, key });
    } else this.layer.createServerTransaction(rq, cn);

    const mf = rq.headers['max-forwards'];
    if (mf !== undefined && Number(mf) <= 0) return void this.respond(rq, 483);
    const scheme = uriScheme(rq.uri);
    if (!scheme || !SUPPORTED_SCHEMES.has(scheme)) return void this.respond(rq, 416);
    const require = typeof rq.headers.require === 'string' ? rq.headers.require : '';
    const unsupported = require
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s && !SUPPORTED_EXTENSIONS.has(s.toLowerCase()));
    if (unsupported.length && rq.method !== 'CANCEL')
      return void this.respond(rq, 420, { headers: { unsupported: unsupported.join(', ') } });
    const type = (typeof rq.headers['content-type'] === 'string' ? rq.headers['content-type'] : '')
      .split(';')[0]
      ?.trim()
      .toLowerCase();
    if (
      rq.method === 'INVITE' &&
      rq.content &&
      type &&
      !SESSION_TYPES.has(type) &&
      !type.startsWith('multipart/')
    ) {
      this.respond(rq, 415, { headers: { accept: 'application/sdp' } });
      return;
    }
    this.dispatch(rq, flow);
  }

  private dispatch(rq: SipRequest, flow: Flow): void {
    try {
      this.handler(rq, flow);
    } catch (err) {
      this.counters.handlerErrors++;
      this.log.error({ err, method: rq.method }, 'sip request handler failed');
      if (rq.method !== 'ACK') this.respond(rq, 500);
    }
  }

  // ---- responses ------------------------------------------------------------------------------

  /** Answers a request through its server transaction (retransmissions are the layer's job). */
  respond(
    rq: SipRequest,
    status: number,
    options: { reason?: string; toTag?: string; headers?: Record<string, unknown>; content?: string } = {},
  ): SipResponse {
    const rs = makeResponse(rq, status, options);
    const stateless = this.statelessReplies.get(rq);
    if (stateless) {
      const text = stack.stringify(rs);
      if (stateless.key !== null && status >= 200) this.recentReplies.answered(stateless.key, text);
      this.transports.sendRaw(stateless.flow, text);
    } else this.sendResponse(rs);
    return rs;
  }

  /** Sends a response built elsewhere; false when its transaction is gone. */
  sendResponse(rs: SipResponse): boolean {
    const t = this.layer.getServer(rs);
    if (!t) return false;
    t.send(cloneMessage(rs));
    return true;
  }

  // ---- requests -------------------------------------------------------------------------------

  /**
   * Sends a request in a client transaction. `onResponse` sees every response (1xx, and for INVITE
   * every 2xx retransmission); exactly one final response arrives, locally made if need be.
   * For INVITE, the returned handle can CANCEL it (RFC 3261 §9.1: held until a provisional arrives).
   */
  send(request: SipRequest, onResponse: (rs: SipResponse) => void, options: SendOptions = {}): ClientRequest {
    const rq = cloneMessage(request);
    if (rq.method !== 'CANCEL')
      rq.headers.via = [{ protocol: 'UDP', host: this.host, params: {} }, ...(rq.headers.via ?? [])];
    let finalSeen = false;
    let provisionalSeen = false;
    let cancelWanted = false;
    let cancelSent = false;
    let connection: SipConnection | undefined;
    const sendCancel = () => {
      if (cancelSent || finalSeen || !connection) return;
      cancelSent = true;
      const cancel: SipRequest = {
        method: 'CANCEL',
        uri: rq.uri,
        version: '2.0',
        headers: {
          via: [structuredClone(rq.headers.via[0] as NonNullable<(typeof rq.headers.via)[0]>)],
          to: structuredClone(rq.headers.to),
          from: structuredClone(rq.headers.from),
          'call-id': rq.headers['call-id'],
          cseq: { seq: rq.headers.cseq.seq, method: 'CANCEL' },
          'max-forwards': 70,
          ...(rq.headers.route ? { route: structuredClone(rq.headers.route) } : {}),
        },
      };
      try {
        this.layer.createClientTransaction(connection, cancel, () => {});
      } catch (err) {
        this.log.warn({ err }, 'sip CANCEL failed to start');
      }
    };
    const deliver = (rs: StackMessage) => {
      const r = rs as SipResponse;
      if (r.status >= 200) {
        if (finalSeen && !(r.status < 300 && rq.method === 'INVITE')) return;
        finalSeen = true;
      } else if (!provisionalSeen) {
        provisionalSeen = true;
        if (cancelWanted) setImmediate(sendCancel);
      }
      try {
        onResponse(r);
      } catch (err) {
        this.log.error({ err }, 'sip response handler failed');
      }
    };
    this.targets(rq, options, (targets, refused) => {
      if (refused) {
        this.log.warn({ method: rq.method, refused }, 'sip destination refused by the target policy');
        return deliver(
          makeResponse(rq, FORBIDDEN_DESTINATION.status, { reason: FORBIDDEN_DESTINATION.reason }),
        );
      }
      const next = (lastStatus: number) => {
        const target = targets.shift();
        if (!target) return deliver(makeResponse(rq, lastStatus));
        let client: { message(m: StackMessage): void } | undefined;
        const cn = this.connectionFor(target, () => client?.message(makeResponse(rq, 503)));
        if (!cn) return next(503);
        connection = cn;
        let failedOver = false;
        try {
          client = this.layer.createClientTransaction(cn, rq, (rs) => {
            if (failedOver) return;
            if (rs.status === 503 && targets.length > 0 && !provisionalSeen) {
              failedOver = true;
              rq.headers.via[0] = { protocol: 'UDP', host: this.host, params: {} };
              return next(503);
            }
            deliver(rs);
          });
        } catch (err) {
          this.log.warn({ err }, 'sip client transaction failed to start');
          next(503);
        }
      };
      next(targets.length ? 503 : 404);
    });
    return {
      sent: rq,
      cancel: () => {
        cancelWanted = true;
        if (provisionalSeen) sendCancel();
      },
    };
  }

  /** Sends a request outside any transaction (the ACK for a 2xx: RFC 3261 §13.2.2.4, §17.1.1.3). */
  sendStateless(request: SipRequest, options: SendOptions = {}): void {
    const rq = cloneMessage(request);
    rq.headers.via = [{ protocol: 'UDP', host: this.host, params: { branch: newBranch() } }];
    this.targets(rq, options, (targets, refused) => {
      const target = targets[0];
      if (!target) {
        this.log.warn({ method: rq.method, refused }, 'sip: no route for stateless request');
        return;
      }
      this.connectionFor(target, () => {})?.send(rq);
    });
  }

  private connectionFor(target: Target | Flow, onError: (err: Error) => void): SipConnection | undefined {
    if ('local' in target) return this.transports.get(target);
    return this.transports.open(target, onError);
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
      ? blockedReason(host, { blockPrivate: (tenantTarget && this.options.blockPrivate) ?? false })
      : blockedHostReason(host);
  }

  /**
   * Next-hop addresses (RFC 3261 §8.1.2, §16.12): the first Route entry if any (a strict router's
   * URI swaps into the Request-URI), else the Request-URI; then RFC 3263 resolution, keeping only
   * transports we run. Every resolved address passes the target policy, or the request is refused
   * (`refused` says why): a name that resolves to one blocked address is refused as a whole, as for
   * webhooks. A flow (a client's own connection) is not a destination anyone chose, so it is not checked.
   */
  private targets(
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
    const policy = { blockPrivate: (options.tenantTarget && this.options.blockPrivate) ?? false };
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

export { ReasonPhrase };
