/** Gateways (spec §Gateway): SIP accounts the service registers itself with. */

export interface Gateway {
  readonly sid: string;
  readonly accountSid: string;
  readonly friendlyName: string;
  readonly userName: string | null;
  readonly password: string | null;
  readonly proxy: string;
  readonly register: boolean;
  /** Registration time to live, seconds. */
  readonly ttl: number;
  readonly dateCreated: Date;
  readonly dateUpdated: Date;
}

export type GatewayPatch = Partial<
  Pick<Gateway, 'friendlyName' | 'userName' | 'password' | 'proxy' | 'register' | 'ttl'>
>;

export type GatewayChange =
  | { readonly kind: 'upsert'; readonly gateway: Gateway }
  | { readonly kind: 'delete'; readonly sid: string };

export interface GatewayStore {
  insert(g: Gateway): Promise<void>;
  get(accountSid: string, sid: string): Promise<Gateway | null>;
  list(accountSid: string): Promise<Gateway[]>;
  /** Every gateway of the platform (the SIP layer registers all those with register=true). */
  listAll(): Promise<Gateway[]>;
  update(accountSid: string, sid: string, patch: GatewayPatch): Promise<Gateway | null>;
  delete(accountSid: string, sid: string): Promise<boolean>;
  /** Changes made on any node, for the gateway registration actors; returns an unsubscribe function. */
  watch(onChange: (change: GatewayChange) => void): () => void;
}

/**
 * The live registration of one gateway (kept in the snapshot store under kind `gateway` by the SIP
 * layer's registration actor; shown on the Gateway resource).
 */
export interface GatewayRegistrationStatus {
  readonly gatewaySid: string;
  /** `registering`, `registered`, `retrying`, `unregistering`. */
  readonly state: string;
  /** When the binding at the gateway ends (epoch ms), while registered. */
  readonly expiresAt: number | null;
  /** Last final SIP status of a REGISTER (0 = no answer). */
  readonly lastStatus: number | null;
  readonly lastReason: string | null;
  readonly failures: number;
  readonly updatedAt: number;
}
