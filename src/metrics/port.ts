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

/** Which way a SIP message crossed this node's transports. */
export type SipWireDirection = 'in' | 'out';

/**
 * What the SIP stack records at its wire boundary: every parsed message received and every message
 * written to a transport (retransmissions included, so in and out count the same thing).
 */
export interface SipMeter {
  /** A request crossed the wire; `method` as on the wire (the adapter folds unknown ones). */
  request(direction: SipWireDirection, method: string): void;
  /** A response crossed the wire with this status code. */
  response(direction: SipWireDirection, status: number): void;
}

/**
 * What the webhook client records once per `request()`: the whole delivery (retries and fallback
 * included), and when it failed, the failure's kind (a closed set in src/webhooks/types.ts).
 */
export interface WebhookMeter {
  delivered(seconds: number, failure: string | null): void;
}

/** A store whose connection failed, as its client reports it. */
export type StoreName = 'postgres' | 'redis';

/**
 * What the store clients record: connection-level failures only (a refused or dropped connection, a
 * server shutting down), never a statement the application expects to fail such as a unique conflict.
 */
export interface StoreMeter {
  connectionError(store: StoreName): void;
}
