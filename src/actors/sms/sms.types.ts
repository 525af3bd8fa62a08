/**
 * Types of the SMS actor: context, events, emitted effects and the results of its
 * invoked actors. Context is plain data (sids, numbers, provider ids); live handles stay in the
 * service and the carrier link.
 */
import type { SegmentOutcome, SmsChannel, SmsDirection, SmsStatus } from '../../store/sms-store.js';

export type { SegmentOutcome };

/** Machine context: plain data only. */
export interface SmsContext {
  readonly sid: string;
  readonly accountSid: string;
  readonly from: string;
  readonly to: string;
  readonly body: string;
  readonly channel: SmsChannel;
  readonly direction: SmsDirection;
  /** Status of the record the actor starts from (new, resumed or restored): `boot` routes on it. */
  readonly recorded: SmsStatus;
  readonly destinationNetworkId: string | null;
  /** Normalised provider message ids, one per segment, once sent. */
  readonly providerIds: readonly string[];
  /** Final receipt outcome per provider id. */
  readonly outcomes: Readonly<Record<string, SegmentOutcome>>;
  readonly errorCode: number | null;
}

/** How an actor is started: from a new, resumed or restored record. */
export interface SmsInput {
  readonly sid: string;
  readonly accountSid: string;
  readonly from: string;
  readonly to: string;
  readonly body: string;
  readonly channel: SmsChannel;
  readonly direction: SmsDirection;
  /** Status of the record the actor starts from (new, resumed or restored). */
  readonly status: SmsStatus;
  readonly destinationNetworkId: string | null;
  readonly providerIds?: readonly string[];
  /** Receipt outcomes already recorded (restored multi-part messages). */
  readonly outcomes?: Readonly<Record<string, SegmentOutcome>>;
}

/** Events the SMS actor takes (named by source). */
export type SmsEvent =
  /** The carrier link has a bound SMSC connection: queued messages may go. */
  | { readonly type: 'link.up' }
  /** A delivery receipt for one of this message's segments (id normalised). */
  | {
      readonly type: 'smpp.receipt';
      readonly messageId: string;
      readonly outcome: SegmentOutcome | 'pending';
      readonly errorCode: number | null;
    }
  /** The outcome of the `sms.submit` command: the SMSC took every segment. */
  | { readonly type: 'smpp.submitted'; readonly output: SendOutput }
  /** The outcome of the `sms.submit` command: not sent (as data, see SendFailure). */
  | { readonly type: 'smpp.submitFailed'; readonly error: SendFailure };

/** What a submit (`smpp.submitted`) and `deliverToClient` give back. */
export interface SendOutput {
  /** Normalised provider message ids, one per segment (empty for SIP MESSAGE). */
  readonly providerIds: readonly string[];
  readonly possibleDuplicate: boolean;
}

/**
 * How sending failed, as data. `requeue`: not a failure of the message (the link is closing);
 * it stays pending in the store and is resumed on the next start.
 */
export interface SendFailure {
  readonly requeue: boolean;
  readonly errorCode: number | null;
  readonly errorMessage: string | null;
}

/** Input of a submit (`sms.submit`) and of `deliverToClient`. */
export interface SendInput {
  readonly sid: string;
  readonly accountSid: string;
  readonly from: string;
  readonly to: string;
  readonly body: string;
  readonly destinationNetworkId: string | null;
}

/**
 * Effect emitted on every status change: the service records it (conditionally on `from`) and then
 * sends the status callback.
 */
export interface SmsStatusChanged {
  readonly type: 'sms.status';
  readonly sid: string;
  readonly from: readonly SmsStatus[];
  readonly to: SmsStatus;
  readonly errorCode: number | null;
  readonly providerIds?: readonly string[];
  readonly possibleDuplicate?: boolean;
  readonly at: number;
}

/**
 * Command emitted on entering the carrier's sending state: submit the message over the carrier link.
 * Its outcome comes back as exactly one `smpp.submitted` or `smpp.submitFailed` event.
 */
export interface SmsSubmit {
  readonly type: 'sms.submit';
  readonly input: SendInput;
}

/** Everything the SMS actor emits. */
export type SmsEmitted = SmsStatusChanged | SmsSubmit;
