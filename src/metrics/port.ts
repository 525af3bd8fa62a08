/**
 * What the actors' metrics observers record, in domain words; the Prometheus adapter
 * (`prometheus.ts`) turns it into `switchboard_*` series. Labels are small closed sets (direction,
 * status), never sids or numbers.
 */
export interface CallMeter {
  /** A call leg was created (inbound INVITE routed, REST call accepted, `<Dial>` leg placed). */
  callStarted(direction: string): void;
  /** A call leg was answered, `setupSeconds` after it was created. */
  callAnswered(direction: string, setupSeconds: number): void;
  /**
   * A call leg ended with its final status; `durationSeconds` is the answered time. `wasActive`:
   * it was started on this node (a call restored from a node that died was not).
   */
  callEnded(direction: string, status: string, durationSeconds: number, wasActive: boolean): void;
  /** A markup verb ended with its outcome (`next`, `hangup`, `fetch`, `error`…). */
  verbFinished(verb: string, outcome: string): void;
}
