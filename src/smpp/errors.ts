/**
 * SMPP command status values (SMPP v3.4 §5.1.3) and the mapping of provider failures to the
 * spec's SMS error codes (rest-api.md §SMS "Providers' failure codes", 30001–300010).
 */

/** command_status values we act on (SMPP v3.4 Table 5-2). */
export const CommandStatus = {
  ESME_ROK: 0x00,
  ESME_RINVMSGLEN: 0x01,
  ESME_RINVCMDLEN: 0x02,
  ESME_RINVCMDID: 0x03,
  ESME_RINVBNDSTS: 0x04,
  ESME_RALYBND: 0x05,
  ESME_RSYSERR: 0x08,
  ESME_RINVSRCADR: 0x0a,
  ESME_RINVDSTADR: 0x0b,
  ESME_RBINDFAIL: 0x0d,
  ESME_RINVPASWD: 0x0e,
  ESME_RINVSYSID: 0x0f,
  ESME_RMSGQFUL: 0x14,
  ESME_RSUBMITFAIL: 0x45,
  ESME_RTHROTTLED: 0x58,
  /** deliver_sm refused for now: the SMSC should retry later (SMPP v3.4 §5.1.3). */
  ESME_RX_T_APPN: 0x64,
  /** deliver_sm refused for good: the SMSC should not retry. */
  ESME_RX_P_APPN: 0x65,
  ESME_RINVDCS: 0x104,
  /** Not on the wire: our own status for "no response within response_timeout". */
  LOCAL_TIMEOUT: -1,
  /** Not on the wire: the link was closed (shutdown) before the message could be sent. */
  LOCAL_CLOSED: -2,
} as const;

/** Spec error codes for SMS provider failures (rest-api.md §SMS). */
export const SmsErrorCode = {
  QueueOverflow: 30001,
  AccountSuspended: 30002,
  UnreachableHandset: 30003,
  MessageBlocked: 30004,
  UnknownHandset: 30005,
  LandlineOrUnreachableCarrier: 30006,
  CarrierViolation: 30007,
  UnknownError: 30008,
  MissingSegment: 30009,
  PriceExceedsMax: 300010,
} as const;
export type SmsErrorCode = (typeof SmsErrorCode)[keyof typeof SmsErrorCode];

/** Error messages as the spec words them. */
export const SmsErrorMessage: Readonly<Record<SmsErrorCode, string>> = {
  30001: 'Queue overflow',
  30002: 'Account suspended',
  30003: 'Unreachable destination handset',
  30004: 'Message blocked',
  30005: 'Unknown destination handset',
  30006: 'Landline or unreachable carrier',
  30007: 'Carrier violation',
  30008: 'Unknown error',
  30009: 'Missing segment',
  300010: 'Message price exceeds max price',
};

/**
 * A failed SMPP command; the status is data (command_status), never parsed from the message.
 * `errorCode` is the spec code the SMS record stores.
 */
export class SmppError extends Error {
  override readonly name = 'SmppError';
  readonly commandStatus: number;
  readonly errorCode: SmsErrorCode;
  constructor(commandStatus: number, detail?: string) {
    super(detail ?? `SMPP command_status 0x${commandStatus.toString(16).padStart(8, '0')}`);
    this.commandStatus = commandStatus;
    this.errorCode = errorCodeForStatus(commandStatus);
  }
}

export const isSmppError = (e: unknown): e is SmppError => e instanceof SmppError;

/** Statuses that mean "try again later": back off and retry, never fail the message. */
export function isRetryableStatus(status: number): boolean {
  return status === CommandStatus.ESME_RTHROTTLED || status === CommandStatus.ESME_RMSGQFUL;
}

/** submit_sm_resp command_status → spec error code (documented in docs/smpp.md). */
export function errorCodeForStatus(status: number): SmsErrorCode {
  switch (status) {
    case CommandStatus.ESME_RMSGQFUL:
      return SmsErrorCode.QueueOverflow;
    case CommandStatus.ESME_RINVDSTADR:
      return SmsErrorCode.UnknownHandset;
    case CommandStatus.ESME_RINVSRCADR:
    case CommandStatus.ESME_RINVDCS:
    case CommandStatus.ESME_RINVMSGLEN:
      return SmsErrorCode.CarrierViolation;
    case CommandStatus.ESME_RBINDFAIL:
    case CommandStatus.ESME_RINVPASWD:
    case CommandStatus.ESME_RINVSYSID:
      return SmsErrorCode.AccountSuspended;
    case CommandStatus.ESME_RSUBMITFAIL:
      return SmsErrorCode.UnreachableHandset;
    default:
      return SmsErrorCode.UnknownError;
  }
}

/** Final receipt states (SMPP v3.4 Appendix B `stat:`), as delivered or failed. */
export type ReceiptOutcome = 'delivered' | 'undelivered' | 'failed' | 'pending';

/**
 * Receipt `stat` → outcome and spec code. UNDELIV with a network error (err ≠ 000) that names an
 * absent subscriber is reported 30005, otherwise 30003.
 */
export function mapReceiptStat(
  stat: string,
  err: string | undefined,
): { outcome: ReceiptOutcome; errorCode: SmsErrorCode | null } {
  switch (stat.toUpperCase()) {
    case 'DELIVRD':
      return { outcome: 'delivered', errorCode: null };
    case 'ENROUTE':
    case 'ACCEPTD':
    case 'SCHEDULED':
      return { outcome: 'pending', errorCode: null };
    case 'EXPIRED':
      return { outcome: 'undelivered', errorCode: SmsErrorCode.UnreachableHandset };
    case 'DELETED':
      return { outcome: 'failed', errorCode: SmsErrorCode.MessageBlocked };
    case 'UNDELIV': {
      // GSM MAP error 1 "unknown subscriber" → unknown handset; anything else unreachable.
      const code = err === undefined ? Number.NaN : Number.parseInt(err, 10);
      return {
        outcome: 'undelivered',
        errorCode: code === 1 ? SmsErrorCode.UnknownHandset : SmsErrorCode.UnreachableHandset,
      };
    }
    case 'REJECTD':
      return { outcome: 'failed', errorCode: SmsErrorCode.CarrierViolation };
    default:
      return { outcome: 'failed', errorCode: SmsErrorCode.UnknownError };
  }
}

/** message_state TLV (SMPP v3.4 §5.2.28) → the receipt `stat` word. */
export const MessageStateStat: Readonly<Record<number, string>> = {
  0: 'SCHEDULED',
  1: 'ENROUTE',
  2: 'DELIVRD',
  3: 'EXPIRED',
  4: 'DELETED',
  5: 'UNDELIV',
  6: 'ACCEPTD',
  7: 'UNKNOWN',
  8: 'REJECTD',
};
