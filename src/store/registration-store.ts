/**
 * Registrar location service (RFC 3261 §10.3): bindings of an address of record to contacts, each
 * with its own expiry, shared by every node. Also the one secret digest nonces are signed with.
 */

/** The transport flow a binding was registered over (reused to reach TCP, WS and WSS clients). */
export interface BindingFlow {
  readonly protocol: 'UDP' | 'TCP' | 'WS' | 'WSS';
  readonly address: string;
  readonly port: number;
  readonly local: { readonly address: string; readonly port: number };
  /**
   * SIP address (advertised host, SIP port) of the node that took the registration and holds the
   * connection; absent in bindings written before nodes stamped it.
   */
  readonly node?: { readonly address: string; readonly port: number };
}

export interface Binding {
  /** Address of record, `login@domain` (lower-case domain). */
  readonly aor: string;
  /** Contact URI as registered. */
  readonly contact: string;
  /** Absolute expiry, epoch ms. */
  readonly expiresAt: number;
  readonly callId: string;
  readonly cseq: number;
  readonly accountSid: string;
  readonly clientSid: string;
  readonly flow: BindingFlow;
  readonly userAgent: string | null;
  /** Epoch ms of the first registration of this contact. */
  readonly registeredAt: number;
}

export interface RegistrationStore {
  /** Live bindings of the AOR (expired ones are never returned). */
  list(aor: string): Promise<Binding[]>;
  /**
   * Adds or refreshes bindings and removes the contacts listed in `remove`, atomically per AOR, in
   * one round trip. A refreshed contact keeps its first `registeredAt`. Returns the live bindings, or
   * null, writing nothing, when the AOR would end up with more than `maxContacts`.
   */
  apply(
    aor: string,
    upsert: readonly Binding[],
    remove: readonly string[],
    maxContacts: number,
  ): Promise<Binding[] | null>;
  /** Removes every binding of the AOR. */
  clear(aor: string): Promise<void>;
  /** Number of AORs with at least one live binding (supervisor metric RegisteredUsers). */
  countRegistered(): Promise<number>;
  /**
   * The secret every node signs digest nonces with: created once (random) by the first node that
   * asks, then read. One key in all, never one per challenge.
   */
  digestSecret(): Promise<string>;
}

/**
 * What a registrar tells its observers after it changed the bindings of an address of record (the
 * supervisor stream's `registration.changed`): the bindings it added or refreshed, and the contacts
 * it removed (`'*'`: every binding of the AOR). Expiry is not announced: bindings expire by time.
 */
export interface RegistrationChange {
  readonly aor: string;
  readonly accountSid: string;
  readonly clientSid: string;
  /** Epoch ms of the change. */
  readonly at: number;
  readonly upserted: readonly Binding[];
  readonly removed: readonly string[] | '*';
}

/** Called synchronously after each change; must not throw and must not block. */
export type RegistrationObserver = (change: RegistrationChange) => void;
