/**
 * The SIP stack: our transports + the `sip` package's transaction layer. Raw messages are checked
 * (validate.ts) before parsing; requests get their server transaction, then generic checks
 * (request-checks.ts: Max-Forwards → 483, Request-URI scheme → 416, Require → 420), then the one
 * request handler. Outgoing requests pick their next hop from the Route set or the Request-URI
 * (next-hop.ts, RFC 3261 §8.1.2), resolve it (RFC 3263 via the package), and fall through
 * addresses on 503 or transport errors.
 *
 * Guarantees: nothing a socket delivers throws out of here; every outgoing request's callback gets
 * exactly one final response (a local 408/503 when the network gives none).
 */

import type { Logger } from 'pino';
import type { StackMessage, TransactionLayer } from 'sip';
import * as stack from 'sip';
import { AcceptedInvites } from './accepted-invites.js';
import type { Flow, SipConnection, Target, TransportOptions } from './flow.js';
import {
  cloneMessage,
  isRequest,
  makeResponse,
  newBranch,
  ReasonPhrase,
  type ResponseOptions,
  type SipRequest,
  type SipResponse,
} from './message.js';
import { type FlowRouter, NextHops, type SendOptions } from './next-hop.js';
import { RecentReplies } from './recent-replies.js';
import { RegisterRequest } from './register-request.js';
import { rejectionFor, rejectionOf } from './request-checks.js';
import { headerLines } from './response-text.js';
import { SipTimers } from './timers.js';
import { SipTransports } from './transport.js';
import { type ScannedMessage, validateRaw } from './validate.js';
import { statelessResponse } from './wire-response.js';

export type RequestHandler = (rq: SipRequest, flow: Flow) => void;
export type RegisterHandler = (rq: RegisterRequest) => void;

export interface StackOptions extends TransportOptions {
  /**
   * Refuse loopback and private next hops too (SIP_BLOCK_PRIVATE). Link-local and metadata
   * addresses are refused whatever this says (src/security/address-policy.ts).
   */
  readonly blockPrivate?: boolean;
}

/** Local final status for a request whose next hop the target policy refuses. */
export const FORBIDDEN_DESTINATION = { status: 403, reason: 'Forbidden Destination' } as const;

/** An INVITE (or other request) in flight. */
export interface ClientRequest {
  /** The request as sent (its top Via carries the transaction's branch once sent). */
  readonly sent: SipRequest;
  /** CANCELs an INVITE; without effect once a final response arrived. */
  cancel(): void;
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
  private registerHandler: RegisterHandler = (rq) => this.respond(rq, 503);
  private readonly nextHops: NextHops;
  private readonly recentReplies = new RecentReplies();
  private readonly acceptedInvites = new AcceptedInvites(SipTimers.TIMER_L);
  readonly counters: StackCounters = { received: 0, rejected: 0, dropped: 0, handlerErrors: 0 };

  constructor(
    private readonly options: StackOptions,
    private readonly log: Logger,
  ) {
    this.transports = new SipTransports(options, (raw, flow) => this.onRaw(raw, flow), log);
    this.nextHops = new NextHops(this.transports, options.blockPrivate, log);
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

  /** Where REGISTERs go (they never reach the request handler). */
  onRegister(handler: RegisterHandler): void {
    this.registerHandler = handler;
  }

  useFlowRouter(router: FlowRouter): void {
    this.nextHops.useFlowRouter(router);
  }

  /** Whether this node holds the flow's connection (always, without a flow router). */
  holdsFlow(flow: Flow): boolean {
    return this.nextHops.holdsFlow(flow);
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
    if (verdict.message.method === 'REGISTER') {
      this.onRegisterMessage(verdict.message, flow);
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
    if (rq.method === 'INVITE' && this.acceptedInvites.absorbs(rq)) return;
    if (rq.method === 'ACK') {
      this.dispatch(rq, flow);
      return;
    }
    const cn = this.transports.get(flow);
    if (!cn) return;
    this.layer.createServerTransaction(rq, cn);

    const rejection = rejectionOf(rq);
    if (rejection) return void this.respond(rq, rejection.status, { headers: rejection.headers });
    this.dispatch(rq, flow);
  }

  /**
   * A REGISTER is read from its text and answered without a server transaction, as Kamailio's
   * registrar answers (sl): only the final answer's bytes are kept a few seconds for
   * retransmissions (RecentReplies), not a transaction object with its timers for the 32 s of
   * Timer J. At thousands of REGISTERs a second those transactions were most of the heap and of
   * the garbage collector's pauses.
   */
  private onRegisterMessage(message: ScannedMessage, flow: Flow): void {
    this.transports.countRequest('in', 'REGISTER');
    // No connection object: the answer goes out by the flow (sendRaw).
    if (!this.transports.isOpen(flow)) return;
    const rq = new RegisterRequest(message, flow);
    rq.replyKey = RecentReplies.keyFor(flow, rq.branch, rq.callId, rq.seq, rq.method);
    const seen = rq.replyKey === null ? null : this.recentReplies.begin(rq.replyKey);
    if (seen?.kind === 'pending') return;
    if (seen?.kind === 'answered') return void this.transports.sendRaw(flow, seen.text);
    const rejection = rejectionFor(rq.facts);
    if (rejection) return void this.respond(rq, rejection.status, { headers: rejection.headers });
    try {
      this.registerHandler(rq);
    } catch (err) {
      this.counters.handlerErrors++;
      this.log.error({ err, method: rq.method }, 'sip request handler failed');
      this.respond(rq, 500);
    }
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

  /**
   * Answers a request through its server transaction (retransmissions are the layer's job), or a
   * REGISTER at once, written from its text. The response returned is the one the transaction
   * keeps and sends again: read it, do not change it.
   */
  respond(rq: RegisterRequest, status: number, options?: ResponseOptions): void;
  respond(rq: SipRequest, status: number, options?: ResponseOptions): SipResponse;
  respond(
    rq: SipRequest | RegisterRequest,
    status: number,
    options?: ResponseOptions,
  ): SipResponse | undefined;
  respond(
    rq: SipRequest | RegisterRequest,
    status: number,
    options: ResponseOptions = {},
  ): SipResponse | undefined {
    if (rq instanceof RegisterRequest) return void this.answerRegister(rq, status, options);
    // makeResponse copies what it takes of the request: the response is the transaction's own.
    const rs = makeResponse(rq, status, options);
    this.sendResponse(rs);
    return rs;
  }

  private answerRegister(rq: RegisterRequest, status: number, options: ResponseOptions): void {
    const added = headerLines(options.headers);
    if (added === null) throw new Error('a REGISTER answer carries a header only the sip package writes');
    const reason = options.reason ?? ReasonPhrase[status] ?? 'Unknown';
    const content = options.content ?? '';
    const text = `SIP/2.0 ${status} ${reason}\r\n${rq.answerHead()}${added}Content-Length: ${content.length}\r\n\r\n${content}`;
    const bytes =
      rq.replyKey !== null && status >= 200 ? this.recentReplies.answered(rq.replyKey, text) : null;
    this.transports.sendRaw(rq.flow, text, status, bytes);
  }

  /**
   * Sends a response through its transaction; false when the transaction is gone. The layer keeps
   * the object to send again (serializing it only sets its Content-Length): do not change it after,
   * and hand a copy of a response somebody else may change.
   */
  sendResponse(rs: SipResponse): boolean {
    const t = this.layer.getServer(rs);
    if (!t) return false;
    t.send(rs);
    return true;
  }

  /**
   * The 2xx to `invite` was acknowledged: its server transaction ends now, and a compact record
   * absorbs the INVITE's retransmissions for the rest of Timer L (accepted-invites.ts).
   */
  inviteAcknowledged(invite: SipRequest): void {
    const t = this.layer.getServer(invite);
    if (t && this.acceptedInvites.add(invite)) t.shutdown();
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
    this.nextHops.targets(rq, options, (targets, refused) => {
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
    this.nextHops.targets(rq, options, (targets, refused) => {
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
  checkDestination(requestUri: string, route: readonly string[] = []): Promise<string | null> {
    return this.nextHops.checkDestination(requestUri, route);
  }
}

export { ReasonPhrase };
