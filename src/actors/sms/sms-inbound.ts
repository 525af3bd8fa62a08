/**
 * Inbound messages (docs/sms.md "Inbound (MO) and SMS markup"): an MO from the carrier link
 * (deliver_sm, reassembled) or a SIP MESSAGE to a number is recorded as `received` and its actor
 * runs the number's SMS markup (the machine's `handleInbound`); a SIP MESSAGE from a client to a
 * client login is relayed as an outbound message of the sender's account.
 */
import { newSid, SidPrefix } from '../../ids.js';
import type { Logger } from '../../logger.js';
import type { Notifier } from '../../notifications/notifier.js';
import { isE164, toE164 } from '../../numbers/address.js';
import { CommandStatus, type SmppDeliverSmEvent, SmppError } from '../../smpp/port.js';
import { type Account, AccountStatus } from '../../store/account-store.js';
import type { ApplicationStore } from '../../store/application-store.js';
import type { NumberStore } from '../../store/number-store.js';
import {
  type SmsChannel,
  SmsDirection,
  type SmsMessage,
  SmsStatus,
  type SmsStore,
} from '../../store/sms-store.js';
import { isStoreInputError } from '../../store/store-errors.js';
import type { WebhookClient } from '../../webhooks/index.js';
import type { InboundSipMessage } from './client-messenger.js';
import { inputOf, type SmsActorSpawner } from './sms-actors.js';
import { runSmsMarkup, type SmsMarkupDeps } from './sms-markup.js';
import { CLIENT_PREFIX, type SendSmsInput } from './sms-validation.js';

/** Attempts at recording an MO before its deliver_sm is refused for now (200 ms, doubling). */
const MO_ATTEMPTS = 3;
const MO_RETRY_MS = 200;

/**
 * An inbound address as stored: E.164 with `+` for a number that arrives without it (SMPP's
 * `15551234567`, a SIP user part), anything else (alphanumeric senders, short codes) as it is.
 * Bare digit strings count as numbers from 8 digits on (address.ts decides what a number is).
 */
export function e164OrAsIs(address: string): string {
  const a = address.trim();
  if (a.startsWith('+')) return a;
  return toE164(a, 8) ?? a;
}

/** The counters inbound handling feeds (members of the service's `SmsMetrics`). */
export interface InboundCounters {
  TextMessageInboundToApp: number;
  TextMessageNotFound: number;
}

/** What an inbound message may send: a relayed client message or a markup reply (`<Sms>`). */
export type SendFn = (input: SendSmsInput, opts?: { trustedFrom?: boolean }) => Promise<SmsMessage>;

export interface SmsInboundDeps {
  readonly store: Pick<SmsStore, 'insert' | 'getAnyAccount'>;
  readonly numbers: Pick<NumberStore, 'findByNumber'>;
  readonly accounts: { get(sid: string): Promise<Account | null> };
  readonly applications: Pick<ApplicationStore, 'get'>;
  readonly webhooks: Pick<WebhookClient, 'request'>;
  readonly notifier: Pick<Notifier, 'notify'>;
  readonly sendEmail: SmsMarkupDeps['sendEmail'];
  readonly actors: SmsActorSpawner;
  readonly send: SendFn;
  readonly counters: InboundCounters;
  /** True once the service is closing: MO are refused for now (the SMSC repeats them). */
  readonly closing: () => boolean;
  readonly logger: Logger;
}

/** Records inbound messages and runs their markup. */
export class SmsInbound {
  readonly #deps: SmsInboundDeps;
  readonly #log: Logger;

  constructor(deps: SmsInboundDeps) {
    this.#deps = deps;
    this.#log = deps.logger;
  }

  /**
   * The carrier link's MO handler: it answers the deliver_sm with this outcome, so an MO is
   * acknowledged only once recorded. A brief database outage is retried here, then refused for now
   * (ESME_RX_T_APPN: the SMSC repeats it later). Text the store can never hold (NUL in an 8-bit or
   * UCS-2 body, an unpaired surrogate) is refused for good (ESME_RX_P_APPN).
   */
  async takeMo(e: SmppDeliverSmEvent): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        if (this.#deps.closing()) throw new SmppError(CommandStatus.ESME_RX_T_APPN, 'shutting down');
        await this.receiveMo(e);
        return;
      } catch (err) {
        if (isStoreInputError(err)) {
          this.#log.warn({ err, from: e.from, to: e.to }, 'MO refused: text cannot be stored');
          throw new SmppError(CommandStatus.ESME_RX_P_APPN, err.message);
        }
        if (attempt >= MO_ATTEMPTS || this.#deps.closing()) {
          this.#log.error({ err, from: e.from, to: e.to }, 'MO not recorded; refused for now');
          throw err;
        }
        await new Promise((r) => setTimeout(r, MO_RETRY_MS * 2 ** (attempt - 1)));
      }
    }
  }

  /** MO from the carrier (deliver_sm, reassembled). Exactly one record and one markup run per event. */
  async receiveMo(
    e: Pick<SmppDeliverSmEvent, 'from' | 'to' | 'body' | 'segments'>,
  ): Promise<SmsMessage | null> {
    return this.#receive({
      from: e164OrAsIs(e.from),
      to: e164OrAsIs(e.to),
      body: e.body,
      channel: 'smpp',
      segments: e.segments,
    });
  }

  /**
   * A MESSAGE received by the SIP core. To a number → like an MO (the number's SMS markup); to a
   * client login → relayed to that client of the sender's account. Returns the SIP final status.
   */
  async receiveSipMessage(msg: InboundSipMessage): Promise<number> {
    const to = e164OrAsIs(msg.to);
    if (isE164(to)) {
      const m = await this.#receive({ from: msg.from, to, body: msg.body, channel: 'sip', segments: 1 });
      return m ? 202 : 404;
    }
    if (!msg.client) return 403;
    const account = await this.#deps.accounts.get(msg.client.accountSid);
    if (!account || account.status !== AccountStatus.Active) return 403;
    try {
      await this.#deps.send(
        {
          account,
          from: `${CLIENT_PREFIX}${msg.client.login}`,
          to: `${CLIENT_PREFIX}${msg.to}`,
          body: msg.body,
          statusCallback: null,
        },
        { trustedFrom: true },
      );
      return 202;
    } catch (err) {
      this.#log.info({ err, to: msg.to }, 'SIP MESSAGE to a client not relayed');
      this.#deps.counters.TextMessageNotFound++;
      return 404;
    }
  }

  /** The machine's `handleInbound`: the recorded message's SMS markup, run once. */
  async handleInbound(sid: string): Promise<void> {
    const message = await this.#deps.store.getAnyAccount(sid);
    const number = message ? await this.#deps.numbers.findByNumber(message.to) : null;
    const account = message ? await this.#deps.accounts.get(message.accountSid) : null;
    if (!message || !number || !account) return;
    await runSmsMarkup(
      {
        webhooks: this.#deps.webhooks,
        applications: this.#deps.applications,
        notifier: this.#deps.notifier,
        sendSms: (s) => this.#deps.send({ ...s, direction: SmsDirection.OutboundApi }),
        sendEmail: this.#deps.sendEmail,
        logger: this.#log,
      },
      { message, number, account },
    );
  }

  async #receive(r: {
    from: string;
    to: string;
    body: string;
    channel: SmsChannel;
    segments: number;
  }): Promise<SmsMessage | null> {
    const number = await this.#deps.numbers.findByNumber(r.to);
    const account = number ? await this.#deps.accounts.get(number.accountSid) : null;
    if (!number || !account || account.status !== AccountStatus.Active) {
      this.#log.info({ to: r.to }, 'inbound SMS to a number without an active owner (dropped)');
      this.#deps.counters.TextMessageNotFound++;
      return null;
    }
    const now = new Date();
    const m: SmsMessage = {
      sid: newSid(SidPrefix.Sms),
      accountSid: account.sid,
      from: r.from,
      to: number.phoneNumber,
      body: r.body,
      status: SmsStatus.Received,
      direction: SmsDirection.Incoming,
      channel: r.channel,
      price: null,
      priceUnit: 'USD',
      apiVersion: number.apiVersion,
      errorCode: null,
      errorMessage: null,
      statusCallback: null,
      destinationNetworkId: null,
      segments: r.segments,
      possibleDuplicate: false,
      dateSent: now,
      dateCreated: now,
      dateUpdated: now,
    };
    await this.#deps.store.insert(m);
    this.#deps.counters.TextMessageInboundToApp++;
    this.#deps.actors.spawn(inputOf(m));
    return m;
  }
}
