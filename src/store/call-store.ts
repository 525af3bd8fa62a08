/** Call records (spec §Call): the port the call actors write and the Calls REST reads. */

export const CallStatus = {
  Queued: 'queued',
  Ringing: 'ringing',
  InProgress: 'in-progress',
  Completed: 'completed',
  Failed: 'failed',
  Busy: 'busy',
  NoAnswer: 'no-answer',
  Canceled: 'canceled',
} as const;
export type CallStatus = (typeof CallStatus)[keyof typeof CallStatus];
export const CALL_STATUSES: readonly CallStatus[] = Object.values(CallStatus);
export const TERMINAL_CALL_STATUSES: readonly CallStatus[] = [
  'completed',
  'failed',
  'busy',
  'no-answer',
  'canceled',
];

export const CallDirection = {
  Inbound: 'inbound',
  OutboundApi: 'outbound-api',
  OutboundDial: 'outbound-dial',
} as const;
export type CallDirection = (typeof CallDirection)[keyof typeof CallDirection];

export interface CallRecord {
  readonly sid: string;
  readonly parentCallSid: string | null;
  readonly accountSid: string;
  readonly to: string;
  readonly from: string;
  readonly phoneNumberSid: string | null;
  readonly status: CallStatus;
  readonly startTime: Date | null;
  readonly endTime: Date | null;
  readonly duration: number | null;
  readonly price: number | null;
  readonly priceUnit: string;
  readonly direction: CallDirection;
  readonly answeredBy: string | null;
  readonly apiVersion: string;
  readonly forwardedFrom: string | null;
  readonly callerName: string | null;
  readonly sipCallId: string | null;
  /**
   * Final SIP response of the INVITE that made the leg (Twilio `SipResponseCode`): the far end's
   * failure status, the one the server gave a call it could not send (480, 503, 403, 400), the one it
   * refused an inbound leg with, or 200 once answered. Null while unknown.
   */
  readonly sipResponseCode: number | null;
  readonly dateCreated: Date;
  readonly dateUpdated: Date;
}

export type CallUpdate = Partial<
  Pick<
    CallRecord,
    | 'status'
    | 'startTime'
    | 'endTime'
    | 'duration'
    | 'price'
    | 'answeredBy'
    | 'sipCallId'
    | 'sipResponseCode'
    | 'to'
    | 'from'
  >
>;

export interface CallFilter {
  readonly accountSid: string;
  readonly to?: string | undefined;
  readonly from?: string | undefined;
  readonly status?: CallStatus | undefined;
  readonly startTimeFrom?: Date | undefined;
  readonly startTimeTo?: Date | undefined;
  readonly parentCallSid?: string | undefined;
}

/** The node running a live call and how long its claim lasts (see CallStore.claimOrphans). */
export interface CallClaim {
  readonly node: string;
  readonly leaseMs: number;
}

/** A REST call's StatusCallback (kept for recovery; not part of the REST resource). */
export interface StoredStatusCallback {
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly events: readonly string[];
}

/** A live call whose node died, as claimed for recovery. */
export interface OrphanCall {
  readonly record: CallRecord;
  readonly statusCallback: StoredStatusCallback | null;
}

/** What a call's progress changes on its record. */
export type CallProgress = Pick<
  CallUpdate,
  'status' | 'startTime' | 'endTime' | 'duration' | 'sipResponseCode'
>;

export interface CallStore {
  /**
   * Writes a new call; with `claim`, owned by that node from the start; `statusCallback` is kept for
   * the recovery of the call if its node dies.
   */
  insert(
    call: CallRecord,
    opts?: { claim?: CallClaim; statusCallback?: StoredStatusCallback | null },
  ): Promise<void>;
  /**
   * Claims up to `limit` live calls (queued, ringing, in-progress) whose claim expired or was never
   * made: their node died. Each is claimed by one node at a time, for `leaseMs`.
   */
  claimOrphans(node: string, leaseMs: number, limit: number): Promise<OrphanCall[]>;
  /** Extends this node's claims on its live calls to now + `leaseMs`. */
  renewClaims(node: string, leaseMs: number): Promise<void>;
  /**
   * Which node runs a live call (the call's claim), and whether that claim is still current; null
   * when the call is not live or not claimed.
   */
  ownerOf(sid: string): Promise<{ readonly node: string; readonly current: boolean } | null>;
  /** Drops this node's claims (a restart with a fixed INSTANCE_ID: nothing is live yet). */
  releaseClaims(node: string): Promise<void>;
  update(sid: string, patch: CallUpdate): Promise<CallRecord | null>;
  /**
   * A live call's progress, without reading the row back (the CDR writer's hot path); concurrent
   * patches are written together. At most one patch per call may be in flight.
   */
  patch(sid: string, patch: CallProgress): Promise<void>;
  get(accountSid: string, sid: string): Promise<CallRecord | null>;
  /**
   * One page of the account's calls, newest first, with the list's total and the account's
   * `version` (see listVersion), all read at one instant.
   */
  list(filter: CallFilter, page: { offset: number; limit: number }): Promise<CallPage>;
  /**
   * A number that changes with every committed write to the account's calls (insert, a change of a
   * listed member, delete), here or on another node: a page read when the version was `v` is still
   * the page while listVersion answers `v`.
   */
  listVersion(accountSid: string): Promise<number>;
}

/** A page of the calls list (CallStore.list). */
export interface CallPage {
  readonly total: number;
  readonly items: CallRecord[];
  /** The account's list version when the page was read (CallStore.listVersion). */
  readonly version: number;
}
