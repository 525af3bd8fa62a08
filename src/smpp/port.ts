/**
 * The carrier-link port: what the SMS actors see of SMPP, in domain words.
 *
 * Guarantees:
 * - `submit` never throws synchronously; it resolves with the provider message id of every segment,
 *   or rejects with an `SmppError` whose `commandStatus` and `errorCode` (spec 30001–300010) are data.
 * - Throttling (ESME_RTHROTTLED 0x58, ESME_RMSGQFUL 0x14) and lost binds never drop a message: it is
 *   retried with backoff or re-sent after re-bind (then `possibleDuplicate` is true).
 * - Receipts are emitted once per (message id, stat), including those arriving before their
 *   submit_sm_resp (parked, then matched).
 * - `close()` is idempotent: sends unbind, rejects what is still queued with LOCAL_CLOSED.
 * - Every inbound PDU is answered, whatever its handling does: a throw or rejection while handling
 *   one ends that PDU with an error command_status (ESME_RSYSERR, or ESME_RX_T_APPN for an MO),
 *   never the process nor the bind.
 */
import type { ReceiptOutcome, SmsErrorCode } from './errors.js';

// Status codes travel as data (SmppError), and receipts are matched on normalised message ids: both
// are part of what the SMS actors see of a carrier link.
export { CommandStatus, isSmppError, SmppError, SmsErrorMessage } from './errors.js';
export { normaliseMessageId } from './receipt.js';

/** An outbound SMS as the actors hand it to the carrier. */
export interface OutboundSms {
  /** Sender: E.164 without '+', short code or alphanumeric. */
  readonly from: string;
  readonly to: string;
  readonly body: string;
  /** Multi-provider extension: sent as TLV 0x060E (decimal 1550, `dest_network_id`). */
  readonly destinationNetworkId?: string;
  /** Ask for a delivery receipt (default: the connection's registered_delivery). */
  readonly registeredDelivery?: boolean;
  /** Our message sid, for logs only. */
  readonly reference?: string;
  /**
   * Called once, just before the message's first submit_sm is written to an SMSC (not while it
   * waits in the queue for a window slot); the write waits for it. The SMS service records there
   * that the carrier may have the message, so a resume after a crash flags only messages that
   * really went out. A rejection fails the message with ESME_RSYSERR, nothing is sent.
   */
  readonly beforeSend?: () => Promise<void>;
}

/** Outcome of a successful submit. */
export interface SubmitResult {
  /** One provider message id per segment, in segment order. */
  readonly messageIds: readonly string[];
  readonly segments: number;
  readonly dataCoding: number;
  /** True when at least one segment was re-sent after a lost bind (the SMSC may have it twice). */
  readonly possibleDuplicate: boolean;
}

export type LinkState = 'connecting' | 'bound' | 'disconnected' | 'closed';

/** MO message (deliver_sm, reassembled when concatenated). */
export interface SmppDeliverSmEvent {
  readonly type: 'smpp.deliverSm';
  readonly from: string;
  readonly to: string;
  readonly body: string;
  readonly dataCoding: number;
  readonly segments: number;
  readonly connection: string;
}

/** Delivery receipt, matched to a submitted segment's message id. */
export interface SmppReceiptEvent {
  readonly type: 'smpp.receipt';
  readonly messageId: string;
  /** Receipt `stat` word (DELIVRD, UNDELIV, EXPIRED, REJECTD, ...). */
  readonly stat: string;
  readonly err: string | null;
  readonly outcome: ReceiptOutcome;
  readonly errorCode: SmsErrorCode | null;
  /** False when the id was never seen in a submit_sm_resp on this process (parked receipt expired). */
  readonly matched: boolean;
  readonly connection: string;
}

/** A connection's bind changed state. */
export interface SmppLinkStateEvent {
  readonly type: 'smpp.linkState';
  readonly connection: string;
  readonly state: LinkState;
  readonly reason?: string;
}

export type SmppEvent = SmppDeliverSmEvent | SmppReceiptEvent | SmppLinkStateEvent;

/**
 * Takes one MO message. The link answers its deliver_sm (the last one, for a concatenated message)
 * only after this settles: ESME_ROK when it resolves; when it rejects with an `SmppError`, that
 * command_status (e.g. ESME_RX_P_APPN: never retry); any other rejection or throw ESME_RX_T_APPN
 * (the SMSC retries later). So an MO is acknowledged only once it is recorded.
 */
export type MoHandler = (event: SmppDeliverSmEvent) => Promise<void>;

export interface CarrierLink {
  submit(message: OutboundSms): Promise<SubmitResult>;
  /**
   * Sets the MO handler (one per link; null removes it). Without one, MO deliver_sm are answered
   * ESME_ROK once their `smpp.deliverSm` event was emitted.
   */
  handleMo(handler: MoHandler | null): void;
  /** Subscribe to events; returns the unsubscribe function. */
  subscribe(listener: (event: SmppEvent) => void): () => void;
  /** True when at least one connection is bound. */
  readonly bound: boolean;
  close(): Promise<void>;
}
