/** Outgoing caller ids: numbers an account may present as From without owning them here. */

export interface OutgoingCallerId {
  readonly sid: string;
  readonly accountSid: string;
  readonly friendlyName: string;
  readonly phoneNumber: string;
  readonly dateCreated: Date;
  readonly dateUpdated: Date;
}

export interface CallerIdFilter {
  readonly accountSid: string;
  readonly phoneNumber?: string | undefined;
  readonly friendlyName?: string | undefined;
}

export interface CallerIdStore {
  /** False when the account already has this number as a caller id. */
  insert(c: OutgoingCallerId): Promise<boolean>;
  get(accountSid: string, sid: string): Promise<OutgoingCallerId | null>;
  list(filter: CallerIdFilter): Promise<OutgoingCallerId[]>;
  rename(accountSid: string, sid: string, friendlyName: string): Promise<OutgoingCallerId | null>;
  delete(accountSid: string, sid: string): Promise<boolean>;
  deleteAllOf(accountSid: string): Promise<void>;
  /** True when `e164` is one of the account's caller ids. */
  has(accountSid: string, e164: string): Promise<boolean>;
}
