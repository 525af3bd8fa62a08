/**
 * Failed-authentication counters shared by every node (spec §Authentication; docs/decisions.md
 * "Authentication throttling"). A key is blocked once its failures within the window reach its
 * limit, until that window ends; a success does not unblock a source, only clears its identity.
 */

/** What one authentication attempt counts against: who it claims to be and where it comes from. */
export interface ThrottleSubject {
  /** Opaque identity key (a hash of the account sid, or of the user name when none matches). */
  readonly identity: string;
  /** The client address. */
  readonly source: string;
}

export interface ThrottleLimits {
  /** Failures per identity within the window before it is blocked. */
  readonly identityFailures: number;
  /** Failures per source address within the window before it is blocked. */
  readonly sourceFailures: number;
  readonly windowMs: number;
}

/** Milliseconds each key stays blocked (0 when it is not). */
export interface ThrottleState {
  readonly identityMs: number;
  readonly sourceMs: number;
}

export interface AuthThrottleStore {
  /** How long the subject's identity and source stay blocked. */
  blockedFor(subject: ThrottleSubject, limits: ThrottleLimits): Promise<ThrottleState>;
  /** Counts one failure against identity and source; returns blockedFor after counting it. */
  recordFailure(subject: ThrottleSubject, limits: ThrottleLimits): Promise<ThrottleState>;
  /** Forgets the identity's failures (after a successful login). */
  clearIdentity(identity: string): Promise<void>;
}
