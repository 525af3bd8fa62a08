/** Profiles (spec §Profile) and their links; extension configurations (§Multi-provider extension). */
/** A platform profile (Super Admin) or a subscriber profile (an account tree's). */
export type ProfileKind = 'platform' | 'subscriber';

/** Multi-provider configuration (spec §Multi-provider extension configuration), as validated. */
export interface ProxyHeader {
  readonly headerName: string;
  readonly key: string;
  readonly value: string;
}
export interface OutboundProxy {
  readonly uri: string;
  readonly username?: string;
  readonly password?: string;
  readonly match?: string;
  readonly headers?: readonly ProxyHeader[];
}

export interface MultiProviderConfig {
  readonly 'outbound-sms'?: readonly [{ readonly destination_network_id: string | number }];
  readonly 'outbound-voice'?: readonly [{ readonly proxy: readonly OutboundProxy[] }];
}

export interface Profile {
  readonly sid: string;
  readonly kind: ProfileKind;
  readonly document: unknown;
  readonly ownerAccountSid: string | null;
  readonly dateCreated: Date;
  readonly dateUpdated: Date;
}

export interface Extension {
  readonly sid: string;
  readonly accountSid: string;
  readonly extensionName: string;
  readonly enabled: boolean;
  readonly configurationData: MultiProviderConfig;
  readonly dateCreated: Date;
  readonly dateUpdated: Date;
}

export interface ProfileStore {
  insert(p: Profile, linkTo?: string): Promise<void>;
  get(sid: string): Promise<Profile | null>;
  list(): Promise<Profile[]>;
  update(sid: string, document: unknown): Promise<Profile | null>;
  delete(sid: string): Promise<boolean>;
  /** Links replace any earlier link of the same entity. */
  link(profileSid: string, targetSid: string): Promise<void>;
  unlink(profileSid: string, targetSid: string): Promise<boolean>;
  linkedTargets(profileSid: string): Promise<string[]>;
  /** The profile linked to the first of `targetSids` that has one, in order. */
  firstLinked(targetSids: readonly string[]): Promise<string | null>;

  insertExtension(e: Extension): Promise<boolean>;
  getExtension(sid: string): Promise<Extension | null>;
  updateExtension(
    sid: string,
    patch: Partial<Pick<Extension, 'enabled' | 'configurationData' | 'accountSid'>>,
  ): Promise<Extension | null>;
  extensionOf(accountSid: string, name: string): Promise<Extension | null>;
}
