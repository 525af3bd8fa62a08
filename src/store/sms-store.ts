/**
 * SMS message store port (spec §SMS message, §SMS status). Postgres is the record: a message is
 * inserted before the API answers 2xx, so an accepted message is never lost.
 */

/** Wire values of the SMS status (spec §SMS message `status`). */
export const SmsStatus = {
  Queued: 'queued',
  Sending: 'sending',
  Sent: 'sent',
  Failed: 'failed',
  Received: 'received',
  Delivered: 'delivered',
  Undelivered: 'undelivered',
} as const;
export type SmsStatus = (typeof SmsStatus)[keyof typeof SmsStatus];

/** Statuses an outbound message leaves no more (a late event finds no transition). */
export const FINAL_SMS_STATUSES: ReadonlySet<SmsStatus> = new Set([
  SmsStatus.Failed,
  SmsStatus.Delivered,
  SmsStatus.Undelivered,
  SmsStatus.Received,
]);

/** Final outcome of one segment's delivery receipt. */
export type SegmentOutcome = 'delivered' | 'undelivered' | 'failed';

/** Wire values of `direction` (spec §SMS message). */
export const SmsDirection = {
  Incoming: 'incoming',
  OutboundApi: 'outbound-api',
  OutboundCall: 'outbound-call',
} as const;
export type SmsDirection = (typeof SmsDirection)[keyof typeof SmsDirection];

/** How a message travels: SMPP to a carrier, or SIP MESSAGE to a registered client. */
export type SmsChannel = 'smpp' | 'sip';

/** An SMS message record (spec §SMS message) plus what sending needs (channel, callback, network id). */
export interface SmsMessage {
  readonly sid: string;
  readonly accountSid: string;
  readonly from: string;
  readonly to: string;
  readonly body: string;
  readonly status: SmsStatus;
  readonly direction: SmsDirection;
  readonly channel: SmsChannel;
  readonly price: string | null;
  readonly priceUnit: string;
  readonly apiVersion: string;
  /** Spec codes 30001–300010 when failed or undelivered. */
  readonly errorCode: number | null;
  readonly errorMessage: string | null;
  readonly statusCallback: string | null;
  /** Multi-provider `outbound-sms` destination_network_id, fixed when the message was accepted. */
  readonly destinationNetworkId: string | null;
  readonly segments: number;
  /** A segment was re-sent after a lost bind: the carrier may have it twice. */
  readonly possibleDuplicate: boolean;
  /** A submit_sm of this message was (about to be) written to an SMSC (see `markSubmitAttempted`). */
  readonly submitAttempted?: boolean;
  readonly dateSent: Date | null;
  readonly dateCreated: Date;
  readonly dateUpdated: Date;
}

/** List sort attributes (spec §SMS list `SortBy`). */
export const SMS_SORT = ['DateCreated', 'From', 'To', 'Direction', 'Status', 'Body', 'Price'] as const;
/** One of SMS_SORT. */
export type SmsSort = (typeof SMS_SORT)[number];

/** List filters (spec §SMS list query parameters). */
export interface SmsFilter {
  readonly accountSid: string;
  readonly to?: string | undefined;
  readonly from?: string | undefined;
  readonly startTime?: Date | undefined;
  readonly endTime?: Date | undefined;
  /** Partial or full text match (case-insensitive substring). */
  readonly body?: string | undefined;
}

/** A status change, applied only when the stored status is one of `from` (idempotent, race-free). */
export interface SmsTransition {
  readonly sid: string;
  readonly from: readonly SmsStatus[];
  readonly to: SmsStatus;
  readonly errorCode?: number | null;
  readonly errorMessage?: string | null;
  /** Provider message ids of the segments (on `sent`), in segment order. */
  readonly providerIds?: readonly string[];
  readonly possibleDuplicate?: boolean;
  readonly dateSent?: Date;
}

/**
 * A message as a status change leaves it: what its status callback tells (spec §Events), without
 * the columns nobody reads after a transition (dates, lease, price).
 */
export type SmsStatusRecord = Pick<
  SmsMessage,
  'sid' | 'accountSid' | 'from' | 'to' | 'body' | 'status' | 'apiVersion' | 'errorCode' | 'statusCallback'
>;

/**
 * The SMS store port. Callers serialise `transition` calls of one message (the SMS service keeps a
 * chain per sid); different messages may be written concurrently.
 */
export interface SmsStore {
  /** `claim`: the node that sends it holds the resume lease until then (see claimPending). */
  insert(m: SmsMessage, claim?: { readonly node: string; readonly until: Date }): Promise<void>;
  get(accountSid: string, sid: string): Promise<SmsMessage | null>;
  getAnyAccount(sid: string): Promise<SmsMessage | null>;
  list(
    filter: SmsFilter,
    sort: { by: SmsSort; direction: 'asc' | 'desc' },
    page: { offset: number; limit: number },
  ): Promise<{ total: number; items: SmsMessage[] }>;
  /** Returns the updated message, or null when the stored status was not in `from` (nothing changed). */
  transition(t: SmsTransition): Promise<SmsStatusRecord | null>;
  /**
   * The outbound message one of whose segments got this (normalised) provider id, with all its ids
   * and the receipt outcomes recorded so far.
   */
  findByProviderId(providerId: string): Promise<{
    message: SmsMessage;
    providerIds: string[];
    outcomes: Record<string, SegmentOutcome>;
  } | null>;
  /**
   * Records, durably, that the message's first submit_sm is about to go out: a resume after a
   * crash re-sends it flagged possible_duplicate only when this was recorded.
   */
  markSubmitAttempted(sid: string): Promise<void>;
  /** Records one segment's final receipt outcome (multi-part messages). */
  recordSegmentOutcome(providerId: string, outcome: SegmentOutcome): Promise<void>;
  /**
   * Claims up to `limit` pending outbound SMPP messages (queued or sending) whose lease is free or
   * expired, for `node` until now + `leaseMs`: a message is resumed by one node at a time. Messages
   * this node holds a live lease on are not returned (it is working on them).
   */
  claimPending(node: string, leaseMs: number, limit: number): Promise<SmsMessage[]>;
  /**
   * When the earliest lease another node holds on a pending outbound SMPP message ends (null when
   * none): the moment a dead node's messages become claimable.
   */
  nextForeignLeaseEnd(node: string): Promise<Date | null>;
  /** Extends this node's leases on its pending messages to now + `leaseMs`. */
  renewClaims(node: string, leaseMs: number): Promise<void>;
  /** Ends the lease on messages this node no longer works on (shutdown), so a restart takes them at once. */
  releaseClaims(node: string): Promise<void>;
}
