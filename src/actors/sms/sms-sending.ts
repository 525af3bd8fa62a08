/**
 * Sending a message: over the carrier link (SMPP submit_sm; the SMS machine's `sms.submit` command,
 * its outcome sent back to the actor as an event) or, for a `client:` recipient, as a SIP MESSAGE
 * (the machine's invoked `deliverToClient`). Both resolve with the provider ids or reject with a
 * `SendFailure` (data, never matched by text).
 */
import { fromPromise } from 'xstate';
import type { Logger } from '../../logger.js';
import {
  type CarrierLink,
  CommandStatus,
  isSmppError,
  normaliseMessageId,
  SmsErrorMessage,
} from '../../smpp/port.js';
import type { SmsStore } from '../../store/sms-store.js';
import type { ClientMessenger } from './client-messenger.js';
import type { SendFailure, SendInput, SendOutput } from './sms.types.js';
import { CLIENT_PREFIX } from './sms-validation.js';

/** Spec error codes of a send that did not go out: 30003 unreachable handset, 30008 unknown error. */
const UNREACHABLE = 30003;
const UNKNOWN_ERROR = 30008;

/** A failure as data; `requeue`: the link is closing, the message stays pending for the next start. */
export function failure(requeue: boolean, errorCode: number | null): SendFailure {
  return {
    requeue,
    errorCode,
    errorMessage:
      errorCode === null ? null : (SmsErrorMessage[errorCode as keyof typeof SmsErrorMessage] ?? null),
  };
}

/** SMPP addresses carry no '+' (TON/NPI say international). */
const toSmpp = (address: string) => (address.startsWith('+') ? address.slice(1) : address);

/** One submit over the carrier link; without a link (no SMSC configured) it fails with 30008. */
export type SubmitSms = (input: SendInput) => Promise<SendOutput>;

/** The carrier submit of the `sms.submit` command. */
export function submitSms(deps: {
  readonly link: CarrierLink | null;
  readonly store: Pick<SmsStore, 'markSubmitAttempted'>;
  readonly logger: Logger;
}): SubmitSms {
  return async (input) => {
    const link = deps.link;
    if (!link) throw failure(false, UNKNOWN_ERROR);
    try {
      const res = await link.submit({
        from: toSmpp(input.from),
        to: toSmpp(input.to),
        body: input.body,
        reference: input.sid,
        beforeSend: () => deps.store.markSubmitAttempted(input.sid),
        ...(input.destinationNetworkId !== null ? { destinationNetworkId: input.destinationNetworkId } : {}),
      });
      return {
        providerIds: res.messageIds.map(normaliseMessageId),
        possibleDuplicate: res.possibleDuplicate,
      };
    } catch (err) {
      if (isSmppError(err)) throw failure(err.commandStatus === CommandStatus.LOCAL_CLOSED, err.errorCode);
      deps.logger.error({ err, smsSid: input.sid }, 'submit failed unexpectedly');
      throw failure(false, UNKNOWN_ERROR);
    }
  };
}

/**
 * `deliverToClient`: a SIP MESSAGE through the messenger current when the message is sent (the SIP
 * core sets it after the service starts; until then 30003).
 */
const CLIENT_UNREACHABLE: ReadonlySet<number> = new Set([404, 408, 430, 480]);

export function deliverToClientLogic(messenger: () => ClientMessenger | null) {
  return fromPromise<SendOutput, SendInput>(async ({ input, signal }) => {
    const m = messenger();
    if (!m) throw failure(false, UNREACHABLE);
    const r = await m.deliver(
      {
        messageSid: input.sid,
        accountSid: input.accountSid,
        from: input.from,
        login: input.to.slice(CLIENT_PREFIX.length),
        body: input.body,
      },
      signal,
    );
    if (r.status >= 200 && r.status < 300) return { providerIds: [], possibleDuplicate: false };
    // 404/480: the client is unknown or not registered now; 430: its connection (held by another
    // node) is gone (RFC 5626 Flow Failed); anything else: unknown error.
    throw failure(false, CLIENT_UNREACHABLE.has(r.status) ? UNREACHABLE : UNKNOWN_ERROR);
  });
}
