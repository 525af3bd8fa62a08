/**
 * Gateway registrations: one `gatewayRegistrationMachine` actor per Gateway with Register=true,
 * created at start and kept in step with gateway create/update/delete on any node (the store's
 * change feed), without a restart. This adapter sends the REGISTERs (digest answered once per
 * challenge) and publishes each actor's live state to the snapshot store, where the Gateway REST
 * resource reads it (`RegistrationState`, `RegistrationExpires`; see docs/sip.md).
 *
 * Of the nodes sharing a Redis, only the holder of a gateway's lease registers it: a carrier sees one
 * binding, not one per node. Every node asks for the leases of all gateways each third of the lease
 * time; the holder's ask renews. A stopping node un-REGISTERs and releases, so the next one takes
 * over within a third of the lease time; a dead node's leases run out within the lease time.
 */
import type { Logger } from 'pino';
import { type Actor, createActor, fromPromise } from 'xstate';
import type {
  Gateway,
  GatewayChange,
  GatewayRegistrationStatus,
  GatewayStore,
} from '../store/gateway-store.js';
import type { LeaseStore } from '../store/lease-store.js';
import type { SnapshotStore } from '../store/snapshot-store.js';
import { retryWithCredentials } from './digest.js';
import {
  gatewayRegistrationMachine,
  type RegisterInput,
  type RegisterOutcome,
  RegistrationState,
  registrationStateOf,
} from './gateway-registration.machine.js';
import { newCallId, newTag, type SipRequest, type SipResponse, sipUriOf } from './message.js';
import { formatSipAddress, parseHostOrSipUri, type SipUri, SipUriError } from './sip-uri.js';
import type { SipStack } from './stack.js';

type RegistrationActor = Actor<typeof gatewayRegistrationMachine>;

/** How long close() waits for the un-REGISTERs it sends. */
const CLOSE_WAIT_MS = 2_000;
/** The status record outlives a dead node by this much (seconds). */
const STATUS_TTL_SECONDS = 86_400;

/** The registrar URI and address of record a Gateway's `Proxy` (host[:port] or a sip: URI) stands for. */
export function gatewayTarget(g: Pick<Gateway, 'proxy' | 'userName'>): {
  readonly registrar: string;
  readonly aor: string;
  readonly transport: 'UDP' | 'TCP';
} | null {
  let uri: SipUri;
  try {
    uri = parseHostOrSipUri(g.proxy);
  } catch (e) {
    if (e instanceof SipUriError) return null;
    throw e;
  }
  if (uri.scheme === 'tel') return null;
  const transport = uri.params.transport?.toLowerCase() === 'tcp' ? 'TCP' : 'UDP';
  return {
    registrar: formatSipAddress(undefined, uri.host, {
      port: uri.port,
      params: transport === 'TCP' ? { transport: 'tcp' } : {},
    }),
    aor: formatSipAddress(g.userName || 'switchboard', uri.host),
    transport,
  };
}

/** Who may register a gateway: the lease store, this node's name in it, and the lease length. */
export interface GatewayLeases {
  readonly store: LeaseStore;
  readonly holder: string;
  readonly ttlMs: number;
}

const leaseName = (gatewaySid: string) => `gateway:${gatewaySid}`;

export class GatewayRegistrations {
  private readonly actors = new Map<string, { actor: RegistrationActor; gateway: Gateway }>();
  /** Every gateway that should be registered by some node, by sid. */
  private readonly wanted = new Map<string, Gateway>();
  /** Registrations stopped because another node holds the lease (their status is that node's). */
  private readonly handedOver = new Set<string>();
  private unwatch: (() => void) | null = null;
  private sweepTimer: NodeJS.Timeout | null = null;
  private sweeping: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly stack: SipStack,
    private readonly gateways: GatewayStore,
    private readonly snapshots: SnapshotStore,
    private readonly log: Logger,
    private readonly leases: GatewayLeases,
  ) {}

  async start(): Promise<void> {
    this.unwatch = this.gateways.watch((change) => this.onChange(change));
    for (const g of await this.gateways.listAll()) this.want(g);
    await this.sweep();
    this.sweepTimer = setInterval(() => void this.sweep(), Math.floor(this.leases.ttlMs / 3));
    this.sweepTimer.unref();
  }

  /** True when this node holds the gateway's lease and runs its registration. */
  holds(gatewaySid: string): boolean {
    return this.actors.has(gatewaySid);
  }

  /** Live status of every registration this node runs. */
  list(): GatewayRegistrationStatus[] {
    return [...this.actors.keys()].map((sid) => this.status(sid)).filter((s) => s !== null);
  }

  status(gatewaySid: string): GatewayRegistrationStatus | null {
    const entry = this.actors.get(gatewaySid);
    if (!entry) return null;
    const snap = entry.actor.getSnapshot();
    const c = snap.context;
    const state = registrationStateOf(snap);
    return {
      gatewaySid,
      state,
      expiresAt: state === RegistrationState.Registered ? c.expiresAt : null,
      lastStatus: c.lastStatus,
      lastReason: c.lastReason,
      failures: c.failures,
      updatedAt: Date.now(),
    };
  }

  /** Sends un-REGISTER for every gateway (bounded wait) and stops the actors; idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.unwatch?.();
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    await this.sweeping;
    const held = [...this.actors.keys()];
    const entries = [...this.actors.values()];
    const done = entries.map(
      ({ actor }) =>
        new Promise<void>((resolve) => {
          const sub = actor.subscribe({ complete: () => resolve() });
          actor.send({ type: 'gateway.removed' });
          setTimeout(() => {
            sub.unsubscribe();
            resolve();
          }, CLOSE_WAIT_MS).unref();
        }),
    );
    await Promise.all(done);
    for (const { actor } of entries) actor.stop();
    this.actors.clear();
    // Handed over at once: the next node's sweep takes the gateways within a third of the lease.
    await Promise.all(
      held.map((sid) =>
        this.leases.store.release(leaseName(sid), this.leases.holder).catch((err) => {
          this.log.warn({ err, gatewaySid: sid }, 'gateway lease not released');
        }),
      ),
    );
  }

  private onChange(change: GatewayChange): void {
    if (this.closed) return;
    if (change.kind === 'delete') {
      this.wanted.delete(change.sid);
      if (this.actors.has(change.sid)) {
        this.remove(change.sid);
        this.leases.store.release(leaseName(change.sid), this.leases.holder).catch(() => {});
      }
      return;
    }
    this.want(change.gateway);
    // A running registration follows the change now; a new gateway waits for nobody: ask at once.
    if (this.actors.has(change.gateway.sid) || !this.wanted.has(change.gateway.sid))
      this.ensure(change.gateway);
    else void this.sweep();
  }

  /** Records whether a gateway should be registered by some node. */
  private want(g: Gateway): void {
    if (g.register && gatewayTarget(g)) this.wanted.set(g.sid, g);
    else this.wanted.delete(g.sid);
  }

  /**
   * Asks for (or renews) the lease of every wanted gateway: starts the registrations this node
   * gained, stops (un-REGISTERs) those it lost. A Redis failure changes nothing: a running
   * registration keeps running rather than leave the carrier without a binding.
   */
  private sweep(): Promise<void> {
    if (this.sweeping) return this.sweeping;
    this.sweeping = (async () => {
      for (const sid of [...this.wanted.keys()]) {
        if (this.closed) return;
        let held: boolean;
        try {
          held = await this.leases.store.acquire(leaseName(sid), this.leases.holder, this.leases.ttlMs);
        } catch (err) {
          this.log.warn({ err, gatewaySid: sid }, 'gateway lease not renewed');
          continue;
        }
        if (this.closed) return;
        const current = this.wanted.get(sid);
        if (held && current) this.ensure(current);
        else if (!held && this.actors.has(sid)) {
          this.log.info({ gatewaySid: sid }, 'gateway lease held by another node: registration handed over');
          // The new holder writes the status now: this node's ending must not erase it.
          this.handedOver.add(sid);
          this.remove(sid);
        }
      }
    })().finally(() => {
      this.sweeping = null;
    });
    return this.sweeping;
  }

  private ensure(g: Gateway): void {
    if (!g.register || !gatewayTarget(g)) {
      if (g.register)
        this.log.warn({ gatewaySid: g.sid, proxy: g.proxy }, 'gateway proxy is not a SIP address');
      this.remove(g.sid);
      return;
    }
    const existing = this.actors.get(g.sid);
    if (existing) {
      const old = existing.gateway;
      existing.gateway = g;
      const changed =
        old.proxy !== g.proxy ||
        old.userName !== g.userName ||
        old.password !== g.password ||
        old.ttl !== g.ttl;
      if (changed) existing.actor.send({ type: 'gateway.updated', ttl: g.ttl });
      return;
    }
    const log = this.log.child({ gatewaySid: g.sid });
    const actor = createActor(
      gatewayRegistrationMachine.provide({
        actors: {
          register: fromPromise<RegisterOutcome, RegisterInput>(({ input }) => this.register(input)),
        },
      }),
      { input: { gatewaySid: g.sid, ttl: g.ttl, callId: newCallId(this.stack.host) } },
    );
    this.actors.set(g.sid, { actor, gateway: g });
    let last: RegistrationState | null = null;
    actor.subscribe({
      next: (snap) => {
        const state = registrationStateOf(snap);
        if (state === last) return;
        last = state;
        const c = snap.context;
        log.info(
          { state, lastStatus: c.lastStatus, lastReason: c.lastReason, failures: c.failures },
          'gateway registration',
        );
        const status = this.status(g.sid);
        if (status && state !== RegistrationState.Removed && !this.handedOver.has(g.sid)) {
          this.snapshots.save('gateway', g.sid, status, STATUS_TTL_SECONDS).catch((err) => {
            log.warn({ err }, 'gateway status not saved');
          });
        }
      },
      complete: () => {
        if (this.actors.get(g.sid)?.actor === actor) this.actors.delete(g.sid);
        if (this.handedOver.delete(g.sid)) return;
        this.snapshots.delete('gateway', g.sid).catch(() => {});
      },
      error: (err) => log.error({ err }, 'gateway registration actor failed'),
    });
    actor.start();
  }

  private remove(sid: string): void {
    this.actors.get(sid)?.actor.send({ type: 'gateway.removed' });
  }

  /** One REGISTER transaction, plus one retry answering a digest challenge. */
  private async register(input: RegisterInput): Promise<RegisterOutcome> {
    const g = this.actors.get(input.gatewaySid)?.gateway;
    const target = g && gatewayTarget(g);
    if (!g || !target) return { status: 0, reason: 'gateway gone', expires: 0, nextCseq: input.cseq };
    const contactUri = formatSipAddress(g.userName || 'switchboard', this.stack.host, {
      port: this.stack.port,
      params: target.transport === 'TCP' ? { transport: 'tcp' } : {},
    });
    const request: SipRequest = {
      method: 'REGISTER',
      uri: target.registrar,
      version: '2.0',
      headers: {
        via: [],
        to: { uri: target.aor, params: {} },
        from: { uri: target.aor, params: { tag: newTag() } },
        'call-id': input.callId,
        cseq: { seq: input.cseq, method: 'REGISTER' },
        contact: [{ uri: contactUri, params: {} }],
        expires: String(input.expires),
        'max-forwards': 70,
        'user-agent': 'Switchboard',
      },
    };
    const credentials =
      g.userName && g.password !== null ? { username: g.userName, password: g.password } : undefined;
    let rs = await this.send(request);
    let sent = request;
    const retry = retryWithCredentials(request, rs, credentials);
    if (retry) {
      sent = retry;
      rs = await this.send(retry);
    }
    return {
      status: rs.status,
      reason: rs.reason ?? '',
      expires: grantedExpires(rs, contactUri, input.expires),
      nextCseq: sent.headers.cseq.seq + 1,
    };
  }

  private send(rq: SipRequest): Promise<SipResponse> {
    return new Promise((resolve) => {
      // A gateway's Proxy is named by a tenant (the Super Admin): the full target policy applies.
      this.stack.send(
        rq,
        (rs) => {
          if (rs.status >= 200) resolve(rs);
        },
        { tenantTarget: true },
      );
    });
  }
}

/** The expiry the registrar granted (RFC 3261 §10.2.4): our Contact's `expires`, else Expires, else asked. */
function grantedExpires(rs: SipResponse, contactUri: string, requested: number): number {
  const ours = sipUriOf(contactUri);
  const contacts = Array.isArray(rs.headers.contact) ? rs.headers.contact : [];
  for (const c of contacts) {
    if (contacts.length === 1 && Number.isFinite(Number(c.params?.expires))) return Number(c.params.expires);
    const u = typeof c.uri === 'string' ? sipUriOf(c.uri) : undefined;
    const e = Number(c.params?.expires);
    if (u && ours && u.host === ours.host && (u.port ?? 5060) === (ours.port ?? 5060) && Number.isFinite(e))
      return e;
  }
  const header = Number(rs.headers.expires);
  return Number.isFinite(header) && String(rs.headers.expires ?? '').trim() !== '' ? header : requested;
}
