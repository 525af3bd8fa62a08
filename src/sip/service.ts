/**
 * The SIP service: stack + registrar + call legs, and the dispatcher that routes each request by
 * method and dialog state. OPTIONS is answered here (keep-alive), methods we do not implement get
 * 501 with Allow. Composed once by src/server.ts.
 */
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { ClientStore } from '../store/client-store.js';
import type { GatewayStore } from '../store/gateway-store.js';
import type { LeaseStore } from '../store/lease-store.js';
import type { RegistrationStore } from '../store/registration-store.js';
import type { SnapshotStore } from '../store/snapshot-store.js';
import type { BoundPorts, Flow } from './flow.js';
import { FlowRelay, FlowTokens } from './flow-relay.js';
import { GatewayRegistrations, gatewayTarget } from './gateways.js';
import { SipLegs } from './legs.js';
import { ALLOW_HEADER, type SipRequest, sipUriOf, tagOf } from './message.js';
import type { InboundInvite } from './port.js';
import { Registrar } from './registrar.js';
import { SipStack, type StackOptions } from './stack.js';

export interface SipServiceOptions extends StackOptions {
  readonly defaultDomain: string;
  /** This node's name among the nodes sharing the Redis: the holder of its gateway leases. */
  readonly instanceId: string;
  readonly gatewayLeaseMs: number;
  readonly minExpires?: number;
  readonly maxExpires?: number;
  /**
   * Whether an INVITE's From host names one of our organizations' domains, i.e. comes from a
   * client that must authenticate (407) before it may call. Carriers and gateways are not asked.
   */
  readonly isClientDomain?: (domain: string) => Promise<boolean>;
}

export class SipService {
  readonly stack: SipStack;
  readonly registrar: Registrar;
  readonly legs: SipLegs;
  readonly gateways: GatewayRegistrations;
  /** Reaches TCP/WS clients held by other nodes, and relays for them into ours (flow-relay.ts). */
  readonly flows: FlowRelay;
  private ports: BoundPorts | null = null;
  private closing = false;
  private draining = false;

  constructor(
    private readonly options: SipServiceOptions,
    stores: {
      readonly registrations: RegistrationStore;
      readonly clients: ClientStore;
      readonly gateways: GatewayStore;
      readonly snapshots: SnapshotStore;
      readonly leases: LeaseStore;
    },
    private readonly log: Logger,
  ) {
    this.stack = new SipStack(options, log);
    const ownHosts = [options.host, options.publicAddress, hostname(), 'localhost', '127.0.0.1', '::1'];
    this.registrar = new Registrar(
      this.stack,
      stores.registrations,
      stores.clients,
      {
        defaultDomain: options.defaultDomain,
        ownHosts,
        ...(options.minExpires !== undefined ? { minExpires: options.minExpires } : {}),
        ...(options.maxExpires !== undefined ? { maxExpires: options.maxExpires } : {}),
      },
      log,
    );
    this.flows = new FlowRelay(
      this.stack,
      new FlowTokens(() => stores.registrations.digestSecret()),
      log.child({ component: 'flow-relay' }),
      [options.host, options.publicAddress],
    );
    this.stack.useFlowRouter(this.flows);
    this.legs = new SipLegs(this.stack, log);
    this.gateways = new GatewayRegistrations(
      this.stack,
      stores.gateways,
      stores.snapshots,
      log.child({ component: 'gateways' }),
      { store: stores.leases, holder: options.instanceId, ttlMs: options.gatewayLeaseMs },
    );
    this.stack.onRequest((rq, flow) => this.dispatch(rq, flow));
    // handleRegister answers every REGISTER itself, a failure with 500.
    this.stack.onRegister((rq) => void this.registrar.handleRegister(rq));
  }

  async start(): Promise<BoundPorts> {
    this.ports = await this.stack.start();
    await this.gateways.start();
    this.log.info(
      { ...this.ports, host: this.options.host, publicAddress: this.options.publicAddress },
      'sip listening',
    );
    return this.ports;
  }

  /** Why the target policy refuses a gateway's `Proxy` (host[:port] or a SIP URI), or null. */
  async checkGatewayProxy(proxy: string): Promise<string | null> {
    const target = gatewayTarget({ proxy, userName: null });
    // Not a SIP address at all: nothing will ever be sent to it (the REST layer refuses it first).
    return target ? this.stack.checkDestination(target.registrar) : null;
  }

  /**
   * Stops taking new dialogs (INVITE, MESSAGE out of dialog: 503 with Retry-After, so a front such
   * as Kamailio fails over) and fails OPTIONS probes; in-dialog requests and registrations are
   * still served.
   */
  drain(): void {
    this.draining = true;
  }

  get bound(): BoundPorts | null {
    return this.ports;
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    await this.gateways.close();
    this.legs.closeAll();
    await this.stack.close();
  }

  private refuseWhileDraining(rq: SipRequest): boolean {
    if (!this.draining) return false;
    this.stack.respond(rq, 503, { reason: 'Draining', headers: { 'retry-after': '5' } });
    return true;
  }

  private dispatch(rq: SipRequest, flow: Flow): void {
    // Another node's request for a client whose connection we hold (even while draining).
    if (this.flows.claims(rq)) return void this.flows.handle(rq, flow);
    const inDialog = tagOf(rq.headers.to) !== undefined;
    switch (rq.method) {
      case 'CANCEL':
        this.legs.onCancel(rq);
        return;
      case 'ACK':
        if (inDialog) this.legs.onInDialog(rq);
        return;
      case 'OPTIONS':
        if (inDialog) {
          this.legs.onInDialog(rq);
          return;
        }
        // A draining node fails the front's probe, so the front stops sending it new calls.
        if (this.refuseWhileDraining(rq)) return;
        this.stack.respond(rq, 200, {
          headers: { allow: ALLOW_HEADER, accept: 'application/sdp', 'accept-language': 'en' },
        });
        return;
      case 'INVITE':
        if (inDialog) {
          this.legs.onInDialog(rq);
          return;
        }
        if (this.refuseWhileDraining(rq)) return;
        if (this.legs.admitNew(rq)) this.guard(rq, 'INVITE', () => this.newInvite(rq, flow));
        return;
      case 'MESSAGE':
        if (inDialog) {
          this.legs.onInDialog(rq);
          return;
        }
        if (this.refuseWhileDraining(rq)) return;
        if (this.legs.admitNew(rq)) this.guard(rq, 'MESSAGE', () => this.newMessage(rq, flow));
        return;
      case 'REFER':
        if (inDialog) {
          this.legs.onInDialog(rq);
          return;
        }
        // A blind transfer names the call it transfers by its dialog (RFC 3515 §2.4.2).
        this.legs.refers.refuse(rq, 404, 'SIP REFER should be sent in dialog');
        return;
      case 'BYE':
      case 'INFO':
      case 'NOTIFY':
        if (inDialog) {
          this.legs.onInDialog(rq);
          return;
        }
        this.stack.respond(rq, 481);
        return;
      default:
        this.stack.respond(rq, 501, { headers: { allow: ALLOW_HEADER } });
    }
  }

  /**
   * Runs the handling of one request so that a throw or a rejection ends that request only: a log
   * line and 500 (ignored by the transaction layer when a final response was sent already).
   */
  private guard(rq: SipRequest, what: string, handle: () => Promise<void>): void {
    const failed = (err: unknown) => {
      this.log.error({ err, method: rq.method }, `${what} handling failed`);
      try {
        this.stack.respond(rq, 500);
      } catch (e) {
        this.log.error({ err: e }, 'sip 500 not sent');
      }
    };
    try {
      handle().catch(failed);
    } catch (err) {
      failed(err);
    }
  }

  /**
   * Requests from a client of one of our domains (its From host) must authenticate (407) first.
   * Resolves with the client, `undefined` for other senders (carriers, gateways), or false when the
   * request was answered (challenged or refused).
   */
  private async clientOf(rq: SipRequest): Promise<InboundInvite['client'] | false> {
    const from = sipUriOf(rq.headers.from.uri);
    const fromHost = from?.scheme === 'tel' ? undefined : from?.host;
    const domain = fromHost ? this.registrar.domainOf(fromHost) : null;
    if (!domain || !this.options.isClientDomain || !(await this.options.isClientDomain(domain)))
      return undefined;
    const auth = await this.registrar.authenticate(rq, domain);
    if (!auth.ok) return false;
    const c = auth.subject.client;
    return { sid: c.sid, accountSid: c.accountSid, login: c.login };
  }

  /** A new INVITE: clients of our domains authenticate first (407), then the leg is handed over. */
  private async newInvite(rq: SipRequest, flow: Flow): Promise<void> {
    const client = await this.clientOf(rq);
    if (client === false) return this.legs.releaseNew(rq);
    this.legs.acceptInvite(rq, flow, client);
  }

  /** A MESSAGE outside a dialog (RFC 3428): authenticated like an INVITE, then handed to messaging. */
  private async newMessage(rq: SipRequest, flow: Flow): Promise<void> {
    const client = await this.clientOf(rq);
    if (client === false) return this.legs.releaseNew(rq);
    await this.legs.onOutOfDialogMessage(rq, flow, client);
  }
}
