/** Clients (spec §Client): SIP user agents that register with the service. */

export interface Client {
  readonly sid: string;
  readonly accountSid: string;
  readonly organizationSid: string;
  readonly login: string;
  readonly friendlyName: string;
  readonly apiVersion: string;
  /** 0 disabled, 1 enabled. */
  readonly status: 0 | 1;
  /** MD5(login:realm:password): what SIP digest needs; the password itself is never stored. */
  readonly ha1: string;
  readonly realm: string;
  readonly voiceUrl: string | null;
  readonly voiceMethod: 'GET' | 'POST';
  readonly voiceFallbackUrl: string | null;
  readonly voiceFallbackMethod: 'GET' | 'POST';
  readonly voiceApplicationSid: string | null;
  readonly dateCreated: Date;
  readonly dateUpdated: Date;
}

export type ClientPatch = Partial<
  Pick<
    Client,
    | 'friendlyName'
    | 'status'
    | 'ha1'
    | 'realm'
    | 'voiceUrl'
    | 'voiceMethod'
    | 'voiceFallbackUrl'
    | 'voiceFallbackMethod'
    | 'voiceApplicationSid'
  >
>;

/** What the SIP registrar needs to check a REGISTER or an INVITE from a client. */
export interface DigestSubject {
  readonly client: Client;
  readonly accountStatus: string;
}

export interface ClientStore {
  /** Throws AppError AlreadyExists when the login is taken in the organization. */
  insert(client: Client): Promise<void>;
  get(accountSid: string, sid: string): Promise<Client | null>;
  list(accountSid: string): Promise<Client[]>;
  update(accountSid: string, sid: string, patch: ClientPatch): Promise<Client | null>;
  delete(accountSid: string, sid: string): Promise<boolean>;
  deleteAllOf(accountSid: string): Promise<void>;
  /**
   * Follows an account migration: the clients move to the new organization. Their HA1 was computed
   * for the old domain (the realm), so they must set a new Password before registering again.
   */
  moveToOrganization(accountSid: string, organizationSid: string): Promise<void>;
  /** The client with this login in the organization whose domain is `domain`, with its account's status. */
  findForDigest(domain: string, login: string): Promise<DigestSubject | null>;
}
