/**
 * The SIP client registrations a supervisor sees (`registration.changed` on the live stream,
 * docs/supervision.md): fed by the registrar's change announcements of this node and by the other
 * nodes' (through the stream relay), never by reading the registration store. Expiry is lazy in the
 * registrar (a binding past its time is simply not returned), so this view keeps one timer per
 * binding it knows of and reports `expired` when it fires, on every node alike: each node tracks
 * every binding of the cluster it heard of, and a refresh that changes nothing visible is still
 * relayed (silently) so the other nodes push their timers back too (docs/decisions.md).
 *
 * Memory is bounded by the live bindings; the timers are unref'd and cleared by `close()`.
 */
import type { Binding, RegistrationChange } from '../../store/registration-store.js';

/** Registration states, as they appear in `state` on the wire. */
export const RegistrationState = {
  Registered: 'registered',
  Unregistered: 'unregistered',
  Expired: 'expired',
} as const;
export type RegistrationState = (typeof RegistrationState)[keyof typeof RegistrationState];

/** One binding of a SIP client as the stream shows it. Times are epoch ms. */
export interface StreamRegistration {
  /** Address of record, `login@domain`. */
  readonly aor: string;
  readonly clientSid: string;
  readonly accountSid: string;
  /** Contact URI as registered. */
  readonly contact: string;
  readonly transport: Binding['flow']['protocol'];
  /** Where the REGISTER came from, `address:port`. */
  readonly source: string;
  readonly userAgent: string | null;
  readonly registeredAt: number;
  readonly expiresAt: number;
  /** Instance id of the node that handled the last REGISTER of the binding. */
  readonly node: string;
}

export interface RegistrationEvent {
  readonly type: 'registration.changed';
  readonly at: number;
  readonly state: RegistrationState;
  readonly registration: StreamRegistration;
}

/** A refresh that changed only the expiry: not shown, but every node's timer must follow it. */
export interface RegistrationRefresh {
  readonly aor: string;
  readonly contact: string;
  readonly expiresAt: number;
}

interface Tracked {
  registration: StreamRegistration;
  timer: NodeJS.Timeout;
  /** When `timer` fires (epoch ms). */
  dueAt: number;
}

/** Node's setTimeout limit (about 24.8 days); a longer wait is taken in steps. */
const MAX_DELAY = 2 ** 31 - 1;

function projectionOf(node: string, b: Binding): StreamRegistration {
  return {
    aor: b.aor,
    clientSid: b.clientSid,
    accountSid: b.accountSid,
    contact: b.contact,
    transport: b.flow.protocol,
    source: `${b.flow.address}:${b.flow.port}`,
    userAgent: b.userAgent,
    registeredAt: b.registeredAt,
    expiresAt: b.expiresAt,
    node,
  };
}

/** Did something a supervisor sees change (the expiry alone does not count)? */
function visiblyChanged(a: StreamRegistration, b: StreamRegistration): boolean {
  return (
    a.transport !== b.transport ||
    a.source !== b.source ||
    a.userAgent !== b.userAgent ||
    a.clientSid !== b.clientSid
  );
}

export class RegistrationView {
  private readonly bindings = new Map<string, Map<string, Tracked>>();

  constructor(
    /** Told of each expiry as it happens. */
    private readonly onExpired: (e: RegistrationEvent) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * A change this node's registrar made: the events to show (added, visibly changed, removed) and
   * the silent refreshes the other nodes need.
   */
  change(
    node: string,
    c: RegistrationChange,
  ): { events: RegistrationEvent[]; refreshes: RegistrationRefresh[] } {
    const events: RegistrationEvent[] = [];
    const refreshes: RegistrationRefresh[] = [];
    const known = this.bindings.get(c.aor);
    const removed = c.removed === '*' ? [...(known?.keys() ?? [])] : c.removed;
    for (const contact of removed) {
      const gone = known?.get(contact);
      this.untrack(c.aor, contact);
      // A contact this node never heard of (registered before it started) is still reported gone.
      const registration: StreamRegistration = gone?.registration ?? {
        aor: c.aor,
        clientSid: c.clientSid,
        accountSid: c.accountSid,
        contact,
        transport: 'UDP',
        source: '',
        userAgent: null,
        registeredAt: c.at,
        expiresAt: c.at,
        node,
      };
      events.push({
        type: 'registration.changed',
        at: c.at,
        state: RegistrationState.Unregistered,
        registration,
      });
    }
    for (const b of c.upserted) {
      const registration = projectionOf(node, b);
      const before = known?.get(b.contact)?.registration;
      this.track(registration);
      if (before && !visiblyChanged(before, registration))
        refreshes.push({ aor: b.aor, contact: b.contact, expiresAt: b.expiresAt });
      else
        events.push({
          type: 'registration.changed',
          at: c.at,
          state: RegistrationState.Registered,
          registration,
        });
    }
    return { events, refreshes };
  }

  /** Another node's event: tracked (or dropped) the same way here. */
  applyRemote(e: RegistrationEvent): void {
    const r = e.registration;
    if (e.state === RegistrationState.Registered) this.track(r);
    else this.untrack(r.aor, r.contact);
  }

  /** Another node's silent refresh: only the timer moves. */
  refresh(r: RegistrationRefresh): void {
    const t = this.bindings.get(r.aor)?.get(r.contact);
    if (t) this.track({ ...t.registration, expiresAt: r.expiresAt });
  }

  /** Live bindings (of the given accounts). */
  list(accounts?: ReadonlySet<string>): StreamRegistration[] {
    const out: StreamRegistration[] = [];
    for (const contacts of this.bindings.values())
      for (const { registration } of contacts.values())
        if (!accounts || accounts.has(registration.accountSid)) out.push(registration);
    return out;
  }

  /** Addresses of record with at least one live binding (of the given accounts). */
  countRegistered(accounts?: ReadonlySet<string>): number {
    let n = 0;
    for (const contacts of this.bindings.values()) {
      const first = contacts.values().next().value;
      if (first && (!accounts || accounts.has(first.registration.accountSid))) n++;
    }
    return n;
  }

  close(): void {
    for (const contacts of this.bindings.values()) for (const t of contacts.values()) clearTimeout(t.timer);
    this.bindings.clear();
  }

  /**
   * Tracks the binding until its expiry. A refresh mostly moves the expiry later: the timer set
   * for the earlier one is kept (it wakes, finds the later time and waits the rest), so a client
   * refreshing every minute costs no timer churn per REGISTER. `rearm` sets a new timer regardless.
   */
  private track(registration: StreamRegistration, rearm = false): void {
    const { aor, contact } = registration;
    let contacts = this.bindings.get(aor);
    if (!contacts) {
      contacts = new Map();
      this.bindings.set(aor, contacts);
    }
    const before = contacts.get(contact);
    if (before && !rearm && before.dueAt <= registration.expiresAt) {
      before.registration = registration;
      return;
    }
    if (before) clearTimeout(before.timer);
    const delay = this.delayUntil(registration.expiresAt);
    const timer = setTimeout(() => this.expire(aor, contact), delay);
    timer.unref();
    contacts.set(contact, { registration, timer, dueAt: this.now() + delay });
  }

  private delayUntil(at: number): number {
    return Math.min(MAX_DELAY, Math.max(0, at - this.now()));
  }

  private expire(aor: string, contact: string): void {
    const t = this.bindings.get(aor)?.get(contact);
    if (!t) return;
    const { registration } = t;
    // Woken early (refreshed since, or a wait longer than one timer can hold): wait the rest.
    if (registration.expiresAt > this.now()) {
      this.track(registration, true);
      return;
    }
    this.untrack(aor, contact);
    this.onExpired({
      type: 'registration.changed',
      at: registration.expiresAt,
      state: RegistrationState.Expired,
      registration,
    });
  }

  private untrack(aor: string, contact: string): void {
    const contacts = this.bindings.get(aor);
    const t = contacts?.get(contact);
    if (!contacts || !t) return;
    clearTimeout(t.timer);
    contacts.delete(contact);
    if (contacts.size === 0) this.bindings.delete(aor);
  }
}
