/**
 * SMS service: the messaging runtime of one node, a façade over the parts in this folder. It
 * accepts outbound messages (validated by sms-validation.ts, recorded first, then one root actor per
 * message: sms-actors.ts), records every status change an actor emits conditionally and has its
 * status callback sent (sms-callbacks.ts), feeds carrier-link events to the actors (link up here,
 * receipts in sms-receipts.ts, MO and SIP MESSAGE in sms-inbound.ts) and resumes pending messages
 * after a restart (sms-resume.ts).
 *
 * Durability: the record is inserted (with a resume lease for this node) before `send` returns, so
 * the API answers 2xx only for a message that is in Postgres. A status change is applied only from
 * the statuses it may come from, so a duplicate submit result or receipt changes nothing and sends
 * no second callback.
 */
import { fromPromise } from 'xstate';
import { AppError } from '../../errors.js';
import { newSid, SidPrefix } from '../../ids.js';
import type { Logger } from '../../logger.js';
import type { Notifier } from '../../notifications/notifier.js';
import {
  type CarrierLink,
  type SmppDeliverSmEvent,
  type SmppEvent,
  SmsErrorMessage,
} from '../../smpp/port.js';
import type { Account } from '../../store/account-store.js';
import type { ApplicationStore } from '../../store/application-store.js';
import type { ClientStore } from '../../store/client-store.js';
import type { NumberStore } from '../../store/number-store.js';
import type { MultiProviderConfig } from '../../store/profile-store.js';
import { SmsDirection, type SmsMessage, SmsStatus, type SmsStore } from '../../store/sms-store.js';
import type { WebhookClient } from '../../webhooks/index.js';
import type { ClientMessenger, InboundSipMessage } from './client-messenger.js';
import { SidChains } from './sid-chains.js';
import { smsMachine } from './sms.machine.js';
import type { SmsStatusChanged } from './sms.types.js';
import { inputOf, SmsActors } from './sms-actors.js';
import { SmsCallbacks } from './sms-callbacks.js';
import { SmsInbound } from './sms-inbound.js';
import type { SmsMarkupDeps } from './sms-markup.js';
import { SmsReceipts } from './sms-receipts.js';
import { SmsResume } from './sms-resume.js';
import { deliverToClientLogic, submitSms } from './sms-sending.js';
import { resolveSmsTimers, type SmsTimers } from './sms-timers.js';
import { type SendSmsInput, SmsValidator } from './sms-validation.js';

export type { SmsActor } from './sms-actors.js';
export { SmsTimers } from './sms-timers.js';
export { BODY_MAX, type SendSmsInput } from './sms-validation.js';

/** What the SMS service needs: ports and adapters only (composed in src/server.ts). */
export interface SmsServiceDeps {
  readonly store: SmsStore;
  /** The carrier link, or null when no SMSC is configured (SMPP_URL unset). */
  readonly link: CarrierLink | null;
  /** SIP seam for `client:` recipients; null until the SIP core wires it (client SMS then fail with 30003). */
  readonly clientMessenger?: ClientMessenger | null;
  readonly numbers: Pick<NumberStore, 'findByNumber'>;
  readonly applications: Pick<ApplicationStore, 'get'>;
  readonly clients: Pick<ClientStore, 'list'>;
  /** The account's effective multi-provider configuration (extension, else profile): `ProfileResolver`. */
  readonly multiProvider: { effectiveMultiProvider(accountSid: string): Promise<MultiProviderConfig | null> };
  readonly accounts: { get(sid: string): Promise<Account | null> };
  readonly webhooks: Pick<WebhookClient, 'request'>;
  readonly notifier: Pick<Notifier, 'notify'>;
  /** `<Email>` of SMS markup. */
  readonly sendEmail: SmsMarkupDeps['sendEmail'];
  readonly logger: Logger;
  /** This node's id (INSTANCE_ID): owner of resume leases. */
  readonly node: string;
  readonly timers?: Partial<Record<keyof typeof SmsTimers, number>>;
}

/** Counters for the supervisor metrics (spec §Supervisor metrics, TextMessage* members). */
export interface SmsMetrics {
  TextMessageInboundToApp: number;
  TextMessageInboundToClient: number;
  TextMessageInboundToProxyOut: number;
  TextMessageNotFound: number;
  TextMessageOutbound: number;
}

/** Outbound statuses counted for metrics. */
export type SmsOutcome = 'sent' | 'delivered' | 'undelivered' | 'failed';
const OUTCOMES: ReadonlySet<string> = new Set<SmsOutcome>(['sent', 'delivered', 'undelivered', 'failed']);
const isOutcome = (status: string): status is SmsOutcome => OUTCOMES.has(status);

/**
 * The messaging runtime of one node: `send` (API and markup), `receiveMo` (SMPP), `receiveSipMessage`
 * (SIP seam), `start` (subscribe + resume), `close` (graceful). See docs/sms.md.
 */
export class SmsService {
  readonly #deps: SmsServiceDeps;
  readonly #t: Record<keyof typeof SmsTimers, number>;
  readonly #log: Logger;
  /** Store writes per message, in order (status changes and segment outcomes). */
  readonly #writes: SidChains;
  readonly #validator: SmsValidator;
  readonly #actors: SmsActors;
  readonly #callbacks: SmsCallbacks;
  readonly #receipts: SmsReceipts;
  readonly #resume: SmsResume;
  readonly #inbound: SmsInbound;
  #unsubscribe: (() => void) | null = null;
  #clientMessenger: ClientMessenger | null;
  #closing: Promise<void> | null = null;
  readonly #metrics: SmsMetrics = {
    TextMessageInboundToApp: 0,
    TextMessageInboundToClient: 0,
    TextMessageInboundToProxyOut: 0,
    TextMessageNotFound: 0,
    TextMessageOutbound: 0,
  };

  /** Outbound status changes since start (Prometheus: sent means submitted to the carrier). */
  readonly #outcomes: Record<SmsOutcome, number> = { sent: 0, delivered: 0, undelivered: 0, failed: 0 };

  constructor(deps: SmsServiceDeps) {
    this.#deps = deps;
    this.#t = resolveSmsTimers(deps.timers);
    this.#log = deps.logger;
    this.#clientMessenger = deps.clientMessenger ?? null;
    const { store, link, logger } = deps;
    const closing = () => this.#closing !== null;
    this.#writes = new SidChains((err, sid) => logger.error({ err, smsSid: sid }, 'SMS status not recorded'));
    this.#validator = new SmsValidator({
      numbers: deps.numbers,
      clients: deps.clients,
      multiProvider: deps.multiProvider,
      hasLink: link !== null,
      numberCacheMs: this.#t.NUMBER_CACHE_MS,
      extensionCacheMs: this.#t.EXTENSION_CACHE_MS,
    });
    this.#callbacks = new SmsCallbacks({ accounts: deps.accounts, webhooks: deps.webhooks, logger });
    const machine = smsMachine.provide({
      actors: {
        deliverToClient: deliverToClientLogic(() => this.#clientMessenger),
        // Bound late: the inbound part needs the actors, which need this machine.
        handleInbound: fromPromise<void, { sid: string }>(({ input }) =>
          this.#inbound.handleInbound(input.sid),
        ),
      },
    });
    this.#actors = new SmsActors({
      machine,
      writes: this.#writes,
      linkBound: () => link?.bound === true,
      receiptWaitMs: this.#t.RECEIPT_WAIT_MS,
      onStatus: (e) => this.#onStatus(e),
      submit: submitSms({ link, store, logger }),
      onEvict: (sid, providerIds) => {
        this.#receipts.forget(providerIds);
        this.#resume.forget(sid);
      },
      logger,
    });
    const actors = this.#actors;
    this.#receipts = new SmsReceipts({
      store,
      actors,
      writes: this.#writes,
      earlyLookupMs: this.#t.EARLY_RECEIPT_LOOKUP_MS,
      logger,
    });
    this.#resume = new SmsResume({
      store,
      actors,
      node: deps.node,
      hasLink: link !== null,
      closing,
      leaseMs: this.#t.LEASE_MS,
      intervalMs: this.#t.RESUME_INTERVAL_MS,
      logger,
    });
    this.#inbound = new SmsInbound({
      store,
      numbers: deps.numbers,
      accounts: deps.accounts,
      applications: deps.applications,
      webhooks: deps.webhooks,
      notifier: deps.notifier,
      sendEmail: deps.sendEmail,
      actors,
      send: (input, opts) => this.send(input, opts),
      counters: this.#metrics,
      closing,
      logger,
    });
  }

  /** Subscribes to the carrier link and resumes pending messages; then sweeps periodically. */
  async start(): Promise<void> {
    const link = this.#deps.link;
    if (link) {
      this.#unsubscribe = link.subscribe((e) => this.#onLinkEvent(e));
      link.handleMo((e) => this.#inbound.takeMo(e));
    }
    await this.#resume.start();
  }

  /**
   * SIP seam: the SIP core sets how `client:` recipients are reached (it starts after this service).
   * Until then such messages fail with 30003.
   */
  useClientMessenger(messenger: ClientMessenger | null): void {
    this.#clientMessenger = messenger;
  }

  /** Message counters since start (spec §Supervisor metrics). */
  metrics(): Readonly<SmsMetrics> {
    return { ...this.#metrics };
  }

  /** Outbound messages that reached each status since start. */
  outcomes(): Readonly<Record<SmsOutcome, number>> {
    return { ...this.#outcomes };
  }

  /** Live actors (tests, metrics). */
  get live(): number {
    return this.#actors.size;
  }

  /** Validates, records (before returning) and starts sending an outbound message. */
  async send(input: SendSmsInput, opts: { trustedFrom?: boolean } = {}): Promise<SmsMessage> {
    if (this.#closing) throw new AppError('Unavailable', 'The SMS service is shutting down');
    const { account } = input;
    const { channel, from, destinationNetworkId } = await this.#validator.validate(
      input,
      opts.trustedFrom === true,
    );
    const now = new Date();
    const status = channel === 'sip' || this.#deps.link?.bound ? SmsStatus.Sending : SmsStatus.Queued;
    const m: SmsMessage = {
      sid: newSid(SidPrefix.Sms),
      accountSid: account.sid,
      from,
      to: input.to,
      body: input.body,
      status,
      direction: input.direction ?? SmsDirection.OutboundApi,
      channel,
      price: null,
      priceUnit: 'USD',
      apiVersion: '2012-04-24',
      errorCode: null,
      errorMessage: null,
      // Spec §Events: no status callback for messages addressed to clients.
      statusCallback: channel === 'sip' ? null : input.statusCallback,
      destinationNetworkId,
      segments: 0,
      possibleDuplicate: false,
      dateSent: null,
      dateCreated: now,
      dateUpdated: now,
    };
    await this.#deps.store.insert(m, {
      node: this.#deps.node,
      until: new Date(now.getTime() + this.#t.LEASE_MS),
    });
    this.#actors.spawn(inputOf(m));
    if (opts.trustedFrom && channel === 'sip') this.#metrics.TextMessageInboundToClient++;
    else this.#metrics.TextMessageOutbound++;
    return m;
  }

  /** MO from the carrier (deliver_sm, reassembled). Exactly one record and one markup run per event. */
  receiveMo(e: Pick<SmppDeliverSmEvent, 'from' | 'to' | 'body' | 'segments'>): Promise<SmsMessage | null> {
    return this.#inbound.receiveMo(e);
  }

  /**
   * SIP seam: a MESSAGE received by the SIP core. To a number → like an MO (the number's SMS
   * markup); to a client login → relayed to that client of the sender's account. Returns the SIP
   * final status to answer with.
   */
  receiveSipMessage(msg: InboundSipMessage): Promise<number> {
    return this.#inbound.receiveSipMessage(msg);
  }

  /**
   * Graceful stop: refuse new messages, let the link finish what is in flight (unbind), record every
   * outcome, stop the actors and release this node's leases so the next start resumes the rest.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#resume.stop();
      await this.#deps.link?.close();
      this.#unsubscribe?.();
      await this.#writes.drain();
      this.#receipts.stop();
      this.#actors.stopAll();
      await this.#writes.drain();
      await this.#callbacks.drain(this.#t.CALLBACK_DRAIN_MS);
      await this.#deps.store.releaseClaims(this.#deps.node).catch((err) => {
        this.#log.warn({ err }, 'SMS leases not released');
      });
    })();
    return this.#closing;
  }

  #onLinkEvent(e: SmppEvent): void {
    if (this.#closing && e.type !== 'smpp.receipt') return;
    switch (e.type) {
      case 'smpp.linkState':
        if (e.state === 'bound') this.#actors.linkUp();
        return;
      case 'smpp.receipt':
        this.#receipts.route(e);
        return;
      case 'smpp.deliverSm':
        return; // taken by SmsInbound.takeMo, which the link awaits before answering
    }
  }

  /** Records a status change (only from the statuses it may come from), then its status callback. */
  #onStatus(e: SmsStatusChanged): void {
    if (isOutcome(e.to)) this.#outcomes[e.to] += 1;
    if (e.providerIds) this.#receipts.register(e.sid, e.providerIds);
    const possibleDuplicate = e.possibleDuplicate === true || this.#resume.isPossibleDuplicate(e.sid);
    const errorCode = e.errorCode;
    this.#writes.add(e.sid, async () => {
      const updated = await this.#deps.store.transition({
        sid: e.sid,
        from: e.from,
        to: e.to,
        ...(errorCode !== null
          ? { errorCode, errorMessage: SmsErrorMessage[errorCode as keyof typeof SmsErrorMessage] ?? null }
          : {}),
        ...(e.providerIds ? { providerIds: e.providerIds, dateSent: new Date(e.at) } : {}),
        ...(possibleDuplicate ? { possibleDuplicate } : {}),
      });
      if (updated?.statusCallback && e.to !== SmsStatus.Sending) this.#callbacks.send(updated);
    });
  }
}
