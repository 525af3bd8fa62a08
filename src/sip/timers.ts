/**
 * SIP protocol timers in one table (RFC 3261 §17.1.1.1 and Table 4). The transaction layer of the
 * `sip` package runs its own copies of A/B/E/F/G/H/I/J/K with T1 = 500 ms; the values here drive
 * what src/sip does itself: 2xx retransmission until ACK (§13.3.1.4), the wait for that ACK
 * (64·T1), registration refresh and the binding limits of the registrar.
 */
export const SipTimers = {
  /** RTT estimate. */
  T1: 500,
  /** Maximum retransmit interval for non-INVITE requests and INVITE responses. */
  T2: 4_000,
  /** Maximum duration a message remains in the network. */
  T4: 5_000,
  /** INVITE/non-INVITE transaction timeout (Timer B/F) and the give-up point of 2xx retransmission. */
  TIMER_B: 64 * 500,
  /** How long an INVITE server transaction absorbs retransmissions after its 2xx (RFC 6026 Timer L). */
  TIMER_L: 64 * 500,
  /** How long a UAS waits for the ACK of its 2xx before it sends BYE (§13.3.1.4). */
  ACK_WAIT: 64 * 500,
  /** A UAC that got a 1xx to its INVITE waits this long for CANCEL's effect before giving up (§9.1). */
  CANCEL_WAIT: 64 * 500,
  /** A UAS sends 100 Trying only when its first response to an INVITE is not out by then (§17.2.1). */
  TRYING: 200,

  /**
   * A REFER the call layer has not answered by then gets 500 (well inside its non-INVITE
   * transaction, Timer F = 64·T1).
   */
  REFER_ANSWER: 16 * 500,
} as const;

/** Registrar limits (RFC 3261 §10.3 step 7): requested expiries are clamped to this range. */
export const RegistrarLimits = {
  MIN_EXPIRES: 60,
  DEFAULT_EXPIRES: 3_600,
  MAX_EXPIRES: 7_200,
  /** Digest nonce life time, seconds. */
  NONCE_TTL: 300,
  /** Contacts kept per address of record. */
  MAX_CONTACTS: 10,
} as const;

/** Gateway (upstream) registration policy. */
export const GatewayTimers = {
  /** Refresh when this share of the granted expiry has passed. */
  REFRESH_RATIO: 0.8,
  /** First retry delay after a failure; doubles up to the cap. */
  RETRY_MIN_MS: 1_000,
  RETRY_MAX_MS: 60_000,
} as const;

/** 2xx retransmission interval number `n` (0-based): T1, 2·T1, 4·T1 … capped at T2. */
export function retransmitInterval(n: number): number {
  return Math.min(SipTimers.T1 * 2 ** n, SipTimers.T2);
}
