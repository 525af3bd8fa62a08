/** Incoming phone numbers (spec §Incoming phone number). */

export type NumberType = 'local' | 'tollfree' | 'mobile';
export type Method = 'GET' | 'POST';

export interface IncomingNumber {
  readonly sid: string;
  readonly accountSid: string;
  readonly phoneNumber: string;
  readonly friendlyName: string;
  readonly numberType: NumberType;
  readonly apiVersion: string;
  readonly voiceCallerIdLookup: boolean;
  readonly voiceUrl: string | null;
  readonly voiceMethod: Method;
  readonly voiceFallbackUrl: string | null;
  readonly voiceFallbackMethod: Method;
  readonly statusCallback: string | null;
  readonly statusCallbackMethod: Method;
  readonly voiceApplicationSid: string | null;
  readonly smsUrl: string | null;
  readonly smsMethod: Method;
  readonly smsFallbackUrl: string | null;
  readonly smsFallbackMethod: Method;
  readonly smsApplicationSid: string | null;
  readonly ussdUrl: string | null;
  readonly ussdMethod: Method;
  readonly ussdFallbackUrl: string | null;
  readonly ussdFallbackMethod: Method;
  readonly ussdApplicationSid: string | null;
  readonly referUrl: string | null;
  readonly referMethod: Method;
  readonly referApplicationSid: string | null;
  readonly voiceCapable: boolean;
  readonly smsCapable: boolean;
  readonly mmsCapable: boolean;
  readonly faxCapable: boolean;
  readonly dateCreated: Date;
  readonly dateUpdated: Date;
}

/** The members a purchase or an update may set. */
export type NumberSettings = Omit<
  IncomingNumber,
  'sid' | 'accountSid' | 'phoneNumber' | 'numberType' | 'dateCreated' | 'dateUpdated'
>;
export type NumberPatch = Partial<NumberSettings & Pick<IncomingNumber, 'accountSid'>>;

export interface NumberFilter {
  readonly accountSid: string;
  /** Partial number; `*` stands for any one digit. */
  readonly phoneNumber?: string | undefined;
  readonly friendlyName?: string | undefined;
  readonly numberType?: NumberType | undefined;
}

export interface NumberStore {
  /** Returns false when the number is already owned (by anyone). */
  insert(n: IncomingNumber): Promise<boolean>;
  get(accountSid: string, sid: string): Promise<IncomingNumber | null>;
  list(filter: NumberFilter): Promise<IncomingNumber[]>;
  update(accountSid: string, sid: string, patch: NumberPatch): Promise<IncomingNumber | null>;
  delete(accountSid: string, sid: string): Promise<IncomingNumber | null>;
  deleteAllOf(accountSid: string): Promise<void>;
  isTaken(e164: string): Promise<boolean>;
  /** Which of `e164s` are owned (by anyone): one query for a page of search candidates. */
  takenAmong(e164s: readonly string[]): Promise<Set<string>>;
  /** For routing inbound traffic: the number wherever it is owned. */
  findByNumber(e164: string): Promise<IncomingNumber | null>;
}
