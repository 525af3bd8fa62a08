/**
 * Call admission port: per-account limits on concurrent calls and calls per second, shared by every
 * node (Redis implementation in src/store/redis/call-admission.ts).
 */
export type AdmissionResult =
  | { readonly admitted: true }
  | { readonly admitted: false; readonly retryAfterMs: number };

export interface CallAdmissionStore {
  /**
   * Takes a slot for `callSid` if the account is under both limits; the slot is a lease that expires
   * after `leaseMs` unless renewed (a crashed node's calls do not hold slots for ever).
   */
  tryAcquire(
    accountSid: string,
    callSid: string,
    limits: { maxConcurrent: number; perSecond: number },
    leaseMs: number,
  ): Promise<AdmissionResult>;
  renew(accountSid: string, callSid: string, leaseMs: number): Promise<void>;
  release(accountSid: string, callSid: string): Promise<void>;
  liveCount(accountSid: string): Promise<number>;
}
