/** Timers of the SMS service in ms, one named table (tests and SMS_LEASE_MS override them). */
export const SmsTimers = {
  /**
   * Resume lease on a pending message (SMS_LEASE_MS); renewed by the sweep while this node works on
   * it. A message of a node that died is resumed at most this long after that node's last renewal.
   */
  LEASE_MS: 10_000,
  /**
   * Sweep: renew this node's leases, claim expired ones (another node died). 0 = a quarter of
   * LEASE_MS, so a lease survives three failed renewals. The sweep also wakes up when the earliest
   * foreign lease ends, so a dead node's messages do not wait for the next interval.
   */
  RESUME_INTERVAL_MS: 0,
  /**
   * How long a sent message's actor waits in memory for receipts; a later receipt restores it from
   * the store (one lookup). Short, so links without registered_delivery do not pile actors up.
   */
  RECEIPT_WAIT_MS: 60_000,
  /** At shutdown, status callbacks still in flight get this long before the webhook client is closed. */
  CALLBACK_DRAIN_MS: 2_000,
  /** A receipt whose id is not known yet waits this long for the submit result before a store lookup. */
  EARLY_RECEIPT_LOOKUP_MS: 1_500,
  /** Multi-provider configuration is cached this long per account. */
  EXTENSION_CACHE_MS: 2_000,
  /** A sender number's owner and capability are cached this long. */
  NUMBER_CACHE_MS: 2_000,
} as const;

/** Every timer, given ones over the defaults; RESUME_INTERVAL_MS 0 resolved to its quarter lease. */
export function resolveSmsTimers(
  given: Partial<Record<keyof typeof SmsTimers, number>> = {},
): Record<keyof typeof SmsTimers, number> {
  const t = { ...SmsTimers, ...given };
  return { ...t, RESUME_INTERVAL_MS: t.RESUME_INTERVAL_MS || Math.max(100, Math.floor(t.LEASE_MS / 4)) };
}
