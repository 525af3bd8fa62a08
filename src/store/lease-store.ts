/**
 * Named leases: at most one holder at a time, for a bounded time. A holder renews before expiry;
 * a holder that dies loses the lease when it runs out, and the next node to ask gets it.
 */
export interface LeaseStore {
  /** Takes the lease, or extends it when `holder` already has it; false when another holds it. */
  acquire(name: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Gives the lease up if `holder` has it (a stopping node hands over at once). */
  release(name: string, holder: string): Promise<void>;
}
