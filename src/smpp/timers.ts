/**
 * SMPP protocol timers and limits in one named table (SMPP v3.4 §2.7 enquire_link, §2.10 timers;
 * backoff figures from benchmarks-and-faults R18/R19). Every value can be overridden per connection
 * by SMPP_URL options or by constructor options (tests use short ones).
 */
export const SmppTimers = {
  /** enquire_link interval (SMPP v3.4 "enquire_link_timer"). */
  ENQUIRE_LINK_MS: 30_000,
  /** Time allowed for any response (bind, submit_sm, enquire_link, unbind) ("response_timer"). */
  RESPONSE_TIMEOUT_MS: 10_000,
  /** First reconnect delay; doubled on each failure. */
  RECONNECT_MIN_MS: 1_000,
  /** Reconnect delay cap. */
  RECONNECT_MAX_MS: 30_000,
  /** First retry after ESME_RTHROTTLED / ESME_RMSGQFUL (vumi default: 100 ms). */
  THROTTLE_MIN_MS: 100,
  /** Throttle retry cap. */
  THROTTLE_MAX_MS: 10_000,
  /** How long inbound segments of a long message wait for their siblings. */
  REASSEMBLY_TIMEOUT_MS: 60_000,
  /** How long a receipt that arrived before its submit_sm_resp stays parked. */
  EARLY_RECEIPT_TTL_MS: 120_000,
  /** Grace period for unbind_resp on shutdown. */
  UNBIND_TIMEOUT_MS: 2_000,
} as const;

/** Bounds on in-memory buffers, so a misbehaving peer cannot exhaust memory. */
export const SmppLimits = {
  /** Max concurrent partially reassembled inbound messages. */
  REASSEMBLY_MAX_ENTRIES: 1_000,
  /** Max receipts parked while waiting for their submit_sm_resp. */
  EARLY_RECEIPT_MAX: 10_000,
  /** Max submit_sm outstanding (waiting for a resp) per bind. */
  WINDOW: 10,
} as const;
