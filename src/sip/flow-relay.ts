/**
 * Clients across nodes: a client registered over TCP or WS holds its connection to one node (its
 * "home"); every other node reaches it through that node, with RFC 5626 / RFC 3327 ideas.
 *
 * - Another node (B) sending to such a flow does not open a connection of its own: it puts
 *   `Route: <sip:HOME;lr;sb-flow=TOKEN>` first and sends to the home node's SIP address. TOKEN names
 *   the connection (transport, source address and port) and is HMAC-signed with the secret the nodes
 *   share (the registrar's digest secret, through a derived key), so no node relays into a
 *   connection a stranger named.
 * - The home node (A), seeing its own flow-token Route on top, acts as a stateful proxy (RFC 3261
 *   §16) for that request: 100 Trying to an INVITE, the request relayed over the client's connection
 *   with two Record-Route entries (RFC 5658: one the client reaches over its connection, one B
 *   reaches), its responses relayed back. ACK, BYE and re-INVITE of the dialog then carry the same
 *   token in their Route set and cross A both ways: a request that arrives over the flow the token
 *   names goes on to its Request-URI (towards B), any other goes into the flow (RFC 5626 §5.3).
 * - A token whose signature fails: 403. A good token whose connection is gone: 430 Flow Failed
 *   (RFC 5626 §11.6). ACKs, which take no response, are dropped in both cases. A request from the
 *   client itself that would open a new dialog or transaction through us (no To-tag): 403, since
 *   it would pass by digest authentication and the call runtime on its way out.
 *
 * UDP contacts are reached directly from every node; nothing here applies to them.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Logger } from 'pino';
import type { StackRouteEntry } from 'sip';
import type { Flow, FlowHome, TransportProtocol } from './flow.js';
import { cloneMessage, type SipRequest, type SipResponse, sipUriOf, tagOf } from './message.js';
import { formatSipAddress } from './sip-uri.js';
import type { ClientRequest, SipStack } from './stack.js';

/** The Route / Record-Route URI parameter that carries a flow token. */
export const FLOW_PARAM = 'sb-flow';
/** RFC 5626 §11.6. */
export const FLOW_FAILED = { status: 430, reason: 'Flow Failed' } as const;
export const BAD_FLOW_TOKEN = { status: 403, reason: 'Invalid Flow Token' } as const;
export const NEW_REQUEST_REFUSED = { status: 403, reason: 'Flow Token Not For New Requests' } as const;

const SIGNATURE_BYTES = 12;
const PROTOCOLS: ReadonlySet<string> = new Set<TransportProtocol>(['TCP', 'WS']);

/** The connection a token names: enough for the transports to find it. */
export interface FlowRef {
  readonly protocol: TransportProtocol;
  readonly address: string;
  readonly port: number;
}

/**
 * Flow tokens: `base64url(protocol|address|port).base64url(HMAC-SHA256(key, first part))`, with a
 * key derived from the shared secret (so the digest nonce key is never used as is for a second
 * purpose). Only characters allowed in a URI parameter value.
 */
export class FlowTokens {
  private key: Promise<Buffer> | null = null;

  constructor(private readonly secret: () => Promise<string>) {}

  private keyOf(): Promise<Buffer> {
    if (!this.key) {
      this.key = this.secret().then((s) => createHmac('sha256', s).update('sb-flow-token').digest());
      this.key.catch(() => {
        this.key = null;
      });
    }
    return this.key;
  }

  async sign(flow: FlowRef): Promise<string> {
    const body = Buffer.from(`${flow.protocol}|${flow.address}|${flow.port}`, 'utf8').toString('base64url');
    return `${body}.${mac(await this.keyOf(), body).toString('base64url')}`;
  }

  /** The flow a token names, or null when it is malformed or its signature fails. */
  async verify(token: string): Promise<FlowRef | null> {
    const [body, sig, extra] = token.split('.');
    if (!body || !sig || extra !== undefined) return null;
    const given = Buffer.from(sig, 'base64url');
    const expected = mac(await this.keyOf(), body);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    const [protocol, address, port, more] = Buffer.from(body, 'base64url').toString('utf8').split('|');
    const n = Number(port);
    if (more !== undefined || !protocol || !PROTOCOLS.has(protocol) || !address || !Number.isInteger(n))
      return null;
    return { protocol: protocol as TransportProtocol, address, port: n };
  }
}

function mac(key: Buffer, body: string): Buffer {
  return createHmac('sha256', key).update(body).digest().subarray(0, SIGNATURE_BYTES);
}

const sameFlow = (a: FlowRef, b: FlowRef) =>
  a.protocol === b.protocol && a.address === b.address && a.port === b.port;

/** The flow token on a Route entry, if it carries one. */
function tokenOf(entry: StackRouteEntry | undefined): string | undefined {
  if (!entry) return undefined;
  const v = sipUriOf(entry.uri)?.params[FLOW_PARAM];
  return typeof v === 'string' && v ? v : undefined;
}

/** Where a flow's connection lives: the node that stamped the binding, or (older bindings) its listener. */
function homeOf(flow: Flow): FlowHome | null {
  if (flow.protocol === 'UDP') return null;
  if (flow.node) return flow.node;
  return flow.protocol === 'TCP' ? flow.local : null;
}

/** What the relay did since start (for tests and logs): requests relayed and refused. */
export interface FlowRelayCounters {
  relayed: number;
  forged: number;
  failed: number;
}

export class FlowRelay {
  readonly counters: FlowRelayCounters = { relayed: 0, forged: 0, failed: 0 };
  /** Relayed INVITEs by `Call-ID|branch` of the request as it reached us, for CANCEL. */
  private readonly invites = new Map<string, ClientRequest>();
  private readonly own: ReadonlySet<string>;

  constructor(
    private readonly stack: SipStack,
    readonly tokens: FlowTokens,
    private readonly log: Logger,
    ownHosts: readonly string[],
  ) {
    this.own = new Set(ownHosts.map((h) => h.toLowerCase()));
  }

  /** This node's SIP address, as it stamps the bindings it takes (`Flow.node`). */
  get home(): FlowHome {
    return { address: this.stack.host, port: this.stack.port };
  }

  /** Whether this node holds the flow (UDP flows and flows of unknown home count as ours). */
  isLocal(flow: Flow): boolean {
    const home = homeOf(flow);
    if (!home) return true;
    if (flow.node) return this.isOwn(flow.node);
    // Not stamped: a flow our transports reported (a dialog's), or a binding from before the stamp.
    return this.stack.transports.isOpen(flow) || this.isOwn(home);
  }

  private isOwn(home: FlowHome): boolean {
    return home.port === this.stack.port && this.own.has(home.address.toLowerCase());
  }

  /**
   * Routes a request for a flow another node holds through that node: a flow-token Route first,
   * unless the request's Route set already starts with one (an in-dialog request whose route set
   * came from the home node's Record-Route).
   */
  async routeThrough(rq: SipRequest, flow: Flow): Promise<void> {
    const home = homeOf(flow);
    if (!home || tokenOf(rq.headers.route?.[0])) return;
    const token = await this.tokens.sign(flow);
    const uri = formatSipAddress(undefined, home.address, {
      port: home.port,
      params: { lr: null, [FLOW_PARAM]: token },
    });
    rq.headers.route = [{ uri, params: {} }, ...(rq.headers.route ?? [])];
  }

  /** Whether the request is one this node relays (its top Route carries a flow token). */
  claims(rq: SipRequest): boolean {
    return tokenOf(rq.headers.route?.[0]) !== undefined;
  }

  /** Relays a claimed request; never throws (a failure answers 500, or drops an ACK). */
  handle(rq: SipRequest, source: Flow): void {
    this.relay(rq, source).catch((err) => {
      this.log.error({ err, method: rq.method }, 'sip flow relay failed');
      if (rq.method !== 'ACK') this.stack.respond(rq, 500);
    });
  }

  private async relay(rq: SipRequest, source: Flow): Promise<void> {
    const fwd = cloneMessage(rq);
    const routes = [...(fwd.headers.route ?? [])];
    const token = tokenOf(routes.shift()) as string;
    // The second entry of our double Record-Route (RFC 5658) names us too.
    if (tokenOf(routes[0]) === token) routes.shift();
    if (routes.length) fwd.headers.route = routes;
    else delete fwd.headers.route;

    const target = await this.tokens.verify(token);
    if (!target) {
      this.counters.forged++;
      this.log.warn({ method: rq.method, from: source.address }, 'sip flow token refused');
      if (rq.method !== 'ACK')
        this.stack.respond(rq, BAD_FLOW_TOKEN.status, { reason: BAD_FLOW_TOKEN.reason });
      return;
    }
    // From the client over its own flow: on to the Request-URI (the other node). Else into the flow.
    const outward = sameFlow(source, target);
    const flow: Flow | undefined = outward
      ? undefined
      : { ...target, local: { address: '', port: 0 }, node: this.home };
    // The client may use its token only for requests of the dialogs we relayed (BYE, re-INVITE):
    // a new request through us would pass by authentication and the call runtime (toll fraud).
    if (outward && tagOf(rq.headers.to) === undefined && rq.method !== 'ACK') {
      this.counters.forged++;
      this.stack.respond(rq, NEW_REQUEST_REFUSED.status, { reason: NEW_REQUEST_REFUSED.reason });
      return;
    }
    if (flow && !this.stack.transports.isOpen(flow)) {
      this.counters.failed++;
      if (rq.method !== 'ACK') this.stack.respond(rq, FLOW_FAILED.status, { reason: FLOW_FAILED.reason });
      return;
    }
    this.counters.relayed++;
    if (rq.method === 'CANCEL') return this.cancel(rq);
    const mf = Number(fwd.headers['max-forwards'] ?? 70);
    fwd.headers['max-forwards'] = Number.isFinite(mf) ? mf - 1 : 69;
    if (rq.method === 'ACK') return void this.stack.sendStateless(fwd, flow ? { flow } : {});
    if (rq.method === 'INVITE' && flow && tagOf(rq.headers.to) === undefined)
      fwd.headers['record-route'] = [
        ...(await this.recordRoute(target, token)),
        ...(fwd.headers['record-route'] ?? []),
      ];
    if (rq.method === 'INVITE') this.stack.respond(rq, 100);
    const key = `${rq.headers['call-id']}|${rq.headers.via[0]?.params.branch ?? ''}`;
    const sent = this.stack.send(fwd, (rs) => this.back(rq, rs, source, key), flow ? { flow } : {});
    if (rq.method === 'INVITE') this.invites.set(key, sent);
  }

  /** Our two Record-Route entries: the one the client reaches over its flow, then the one nodes reach. */
  private async recordRoute(flow: FlowRef, token: string): Promise<StackRouteEntry[]> {
    const { address, port } = this.home;
    const b = this.stack.transports.bound;
    const clientSide = formatSipAddress(undefined, address, {
      port: flow.protocol === 'WS' ? (b.ws ?? port) : port,
      params: { transport: flow.protocol.toLowerCase(), lr: null, [FLOW_PARAM]: token },
    });
    const nodeSide = formatSipAddress(undefined, address, {
      port,
      params: { lr: null, [FLOW_PARAM]: token },
    });
    return [
      { uri: clientSide, params: {} },
      { uri: nodeSide, params: {} },
    ];
  }

  /** A response to a relayed request, less our Via, back to where the request came from. */
  private back(rq: SipRequest, rs: SipResponse, source: Flow, key: string): void {
    if (rs.status >= 200) this.invites.delete(key);
    // We sent our own 100 Trying for an INVITE (hop by hop, RFC 3261 §16.7 step 5).
    if (rs.status === 100) return;
    const out = cloneMessage(rs);
    out.headers.via = out.headers.via.slice(1);
    if (!out.headers.via.length) return;
    // A 2xx retransmitted after our server transaction ended still goes back (RFC 3261 §16.7).
    if (!this.stack.sendResponse(out)) this.stack.transports.get(source)?.send(out);
    if (rs.status >= 300 && rq.method === 'INVITE')
      this.log.debug({ status: rs.status }, 'sip flow relay: INVITE refused by the client');
  }

  private cancel(rq: SipRequest): void {
    const key = `${rq.headers['call-id']}|${rq.headers.via[0]?.params.branch ?? ''}`;
    const invite = this.invites.get(key);
    if (!invite) return void this.stack.respond(rq, 481);
    this.stack.respond(rq, 200);
    invite.cancel();
  }
}
