/**
 * SIP seams of messaging: SMS to `client:<login>` goes out as an
 * out-of-dialog SIP MESSAGE (RFC 3428) to the client's registered contact, and a MESSAGE received
 * by the SIP core is handed to the SMS service. The SMS code depends only on the small
 * `ClientMessenger` interface; `SipClientMessenger` implements it on the SIP port's
 * `sendMessage` / `sip.messageResult`. The composition root wires it (see docs/sms.md "SIP seams").
 */
import { randomUUID } from 'node:crypto';
import type { OutboundMessage, SipEvent } from '../../sip/port.js';

/** A text for a registered client of an account. */
export interface ClientDelivery {
  readonly messageSid: string;
  readonly accountSid: string;
  /** Sender as shown to the client: a number or `client:<login>`. */
  readonly from: string;
  /** The recipient's client login (without `client:`). */
  readonly login: string;
  readonly body: string;
}

/** Final SIP status of the MESSAGE (2xx = accepted by the user agent). */
export interface ClientDeliveryResult {
  readonly status: number;
  readonly reason: string;
}

/** "Deliver to a client": what the SMS actors need of SIP. Never throws for SIP outcomes. */
export interface ClientMessenger {
  deliver(delivery: ClientDelivery, signal?: AbortSignal): Promise<ClientDeliveryResult>;
}

/** An inbound SIP MESSAGE as the SIP core hands it over (to a number, or to a client login). */
export interface InboundSipMessage {
  /** Sender: `client:<login>` for an authenticated client, else the From user part. */
  readonly from: string;
  /** Request-URI user part: an E.164 number (with or without '+') or a client login. */
  readonly to: string;
  readonly body: string;
  /** The authenticated sending client, when the MESSAGE came from one (digest-authenticated). */
  readonly client?: { readonly accountSid: string; readonly login: string } | undefined;
}

/** Where a client can be reached: its registered contact (null when not registered). */
export type ContactLocator = (
  accountSid: string,
  login: string,
) => Promise<Pick<OutboundMessage, 'requestUri' | 'to' | 'flow'> | null>;

/** RFC 3261 Timer F (64·T1): the longest a non-INVITE transaction can take. */
const MESSAGE_TIMEOUT_MS = 32_000;

/**
 * ClientMessenger on the SIP port. The composition root must forward the port's events to
 * `onSipEvent` (only `sip.messageResult` is used).
 */
export class SipClientMessenger implements ClientMessenger {
  readonly #pending = new Map<string, (r: ClientDeliveryResult) => void>();

  constructor(
    private readonly deps: {
      readonly sendMessage: (message: OutboundMessage) => void;
      readonly locate: ContactLocator;
      /** SIP URI shown as From for a sender (`client:alice` → `sip:alice@domain`, numbers → `sip:+1…@domain`). */
      readonly fromUri: (accountSid: string, from: string) => string;
    },
  ) {}

  async deliver(d: ClientDelivery, signal?: AbortSignal): Promise<ClientDeliveryResult> {
    const contact = await this.deps.locate(d.accountSid, d.login);
    if (!contact) return { status: 480, reason: 'Temporarily Unavailable (not registered)' };
    const requestId = randomUUID();
    return new Promise<ClientDeliveryResult>((resolve) => {
      const timer = setTimeout(() => finish({ status: 408, reason: 'Request Timeout' }), MESSAGE_TIMEOUT_MS);
      const onAbort = () => finish({ status: 487, reason: 'Request Terminated' });
      const finish = (r: ClientDeliveryResult) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.#pending.delete(requestId);
        resolve(r);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#pending.set(requestId, finish);
      this.deps.sendMessage({
        requestId,
        requestUri: contact.requestUri,
        to: contact.to,
        flow: contact.flow ?? null,
        from: { uri: this.deps.fromUri(d.accountSid, d.from) },
        body: d.body,
        contentType: 'text/plain;charset=UTF-8',
        headers: { 'X-Switchboard-MessageSid': d.messageSid },
      });
    });
  }

  /** Feed of the SIP port's events. */
  onSipEvent(event: SipEvent): void {
    if (event.type !== 'sip.messageResult') return;
    this.#pending.get(event.requestId)?.({ status: event.status, reason: event.reason });
  }
}
