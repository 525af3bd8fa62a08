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
