/** Applications (spec §Application): pointers to call-control markup, owned by one account. */

export const ApplicationKind = { Voice: 'voice', Sms: 'sms', Ussd: 'ussd' } as const;
export type ApplicationKind = (typeof ApplicationKind)[keyof typeof ApplicationKind];
export const APPLICATION_KINDS: readonly ApplicationKind[] = Object.values(ApplicationKind);

export interface Application {
  readonly sid: string;
  readonly accountSid: string;
  readonly friendlyName: string;
  readonly apiVersion: string;
  readonly voiceCallerIdLookup: boolean;
  readonly rcmlUrl: string | null;
  readonly kind: ApplicationKind;
  readonly dateCreated: Date;
  readonly dateUpdated: Date;
}

export type ApplicationPatch = Partial<
  Pick<Application, 'friendlyName' | 'apiVersion' | 'voiceCallerIdLookup' | 'rcmlUrl' | 'kind'>
>;

export interface ApplicationStore {
  insert(app: Application): Promise<void>;
  get(accountSid: string, sid: string): Promise<Application | null>;
  list(accountSid: string): Promise<Application[]>;
  update(accountSid: string, sid: string, patch: ApplicationPatch): Promise<Application | null>;
  delete(accountSid: string, sid: string): Promise<boolean>;
  deleteAllOf(accountSid: string): Promise<void>;
}
