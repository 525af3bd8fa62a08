/**
 * SMS service: accepts outbound messages (record first, then one root actor per
 * message), feeds carrier-link events (link up, receipts, MO) to the actors, records every status
 * change conditionally and sends signed status callbacks, resumes pending messages after a restart.
 *
 * Durability: the record is inserted (with a resume lease for this node) before `send` returns, so
 * the API answers 2xx only for a message that is in Postgres. A periodic sweep renews this node's
 * leases and claims pending messages whose lease expired (a node that died): each pending message is
 * resumed by one node at a time, and a status change is applied only from the statuses it may come
 * from, so a duplicate submit result or receipt changes nothing and sends no second callback.
 */
import { type Actor, createActor, fromPromise } from 'xstate';
import { AppError } from '../../errors.js';
import { newSid, SidPrefix } from '../../ids.js';
import type { Logger } from '../../logger.js';
import type { Notifier } from '../../notifications/notifier.js';
import {
  AddressError,
  AddressKind,
  isE164,
  toE164 as numberOf,
  parseAddress,
} from '../../numbers/address.js';
import {
  type CarrierLink,
  CommandStatus,
  isSmppError,
  normaliseMessageId,
  type SmppDeliverSmEvent,
  SmppError,
  type SmppEvent,
  type SmppReceiptEvent,
  SmsErrorMessage,
} from '../../smpp/port.js';
import { type Account, AccountStatus } from '../../store/account-store.js';
import type { ApplicationStore } from '../../store/application-store.js';
import type { ClientStore } from '../../store/client-store.js';
import type { IncomingNumber, NumberStore } from '../../store/number-store.js';
import type { MultiProviderConfig } from '../../store/profile-store.js';
import {
  type SmsChannel,
  SmsDirection,
  type SmsMessage,
  SmsStatus,
  type SmsStore,
} from '../../store/sms-store.js';
import { isStoreInputError } from '../../store/store-errors.js';
import type { WebhookClient } from '../../webhooks/index.js';
import { ActorRegistry } from '../runtime.js';
import type { ClientMessenger, InboundSipMessage } from './client-messenger.js';
import { smsMachine, statusOf } from './sms.machine.js';
import type { SendFailure, SendInput, SendOutput, SmsInput, SmsStatusChanged } from './sms.types.js';
import { runSmsMarkup, type SmsMarkupDeps } from './sms-markup.js';

/** A live SMS actor (one per message). */
export type SmsActor = Actor<typeof smsMachine>;

/** Spec §SMS: Body limit (Twilio's 1,600 characters = 10 concatenated segments). */
export const BODY_MAX = 1600;
/** A short code: 3 to 8 digits (national short codes are 3–6, some carriers use up to 8). */
const SMS_TO_FORMS = [AddressKind.E164, AddressKind.ShortCode, AddressKind.Client] as const;
const SMS_FROM_FORMS = [AddressKind.E164, AddressKind.ShortCode] as const;
const CLIENT_PREFIX = 'client:';

/** Timers of the service, one named table (tests shorten them). */
export const SmsTimers = {
  /**
   * Resume lease on a pending message (SMS_LEASE_MS); renewed by the sweep while this node works on
   * it. A message of a node that died is resumed at most this long after that node's last renewal.
   */
  LEASE_MS: 10_000,
  /**
   * Sweep: renew this node's leases, claim expired ones (another node died). 0 = a quarter of
   * LEASE_MS, so a lease survives three failed renewals. The sweep also wakes up when the earliest
   * foreign lease ends, so a dead node's messages do not wait for the next interval.
   */
  RESUME_INTERVAL_MS: 0,
  /**
   * How long a sent message's actor waits in memory for receipts; a later receipt restores it from
   * the store (one lookup). Short, so links without registered_delivery do not pile actors up.
   */
  RECEIPT_WAIT_MS: 60_000,
  /** At shutdown, status callbacks still in flight get this long before the webhook client is closed. */
  CALLBACK_DRAIN_MS: 2_000,
  /** A receipt whose id is not known yet waits this long for the submit result before a store lookup. */
  EARLY_RECEIPT_LOOKUP_MS: 1_500,
  /** Multi-provider configuration is cached this long per account. */
  EXTENSION_CACHE_MS: 2_000,
  /** A sender number's owner and capability are cached this long. */
  NUMBER_CACHE_MS: 2_000,
} as const;

const EARLY_RECEIPTS_MAX = 10_000;
/** Lookups of a receipt the link matched but the store does not show as sent yet (× EARLY_RECEIPT_LOOKUP_MS). */
const EARLY_RECEIPT_ATTEMPTS = 40;

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

/** An outbound message as the API or the markup hands it over. */
export interface SendSmsInput {
  readonly account: Account;
  readonly from: string;
  readonly to: string;
  readonly body: string;
  readonly statusCallback: string | null;
  readonly direction?: SmsDirection;
}

/** Counters for the supervisor metrics (spec §Supervisor metrics, TextMessage* members). */
export interface SmsMetrics {
  TextMessageInboundToApp: number;
  TextMessageInboundToClient: number;
  TextMessageInboundToProxyOut: number;
  TextMessageNotFound: number;
  TextMessageOutbound: number;
}

interface EarlyReceipt {
  readonly event: SmppReceiptEvent;
  readonly timer: NodeJS.Timeout;
}

/** `+15551234567` from SMPP's `15551234567`; other addresses (alphanumeric, short codes) as they are. */
export function toE164(address: string): string {
  const a = address.trim();
  if (a.startsWith('+')) return a;
  return numberOf(a, 8) ?? a;
}

/** Refuses a malformed address with the parser's message under the catalogue entry `error`. */
function checkAddress(
  value: string,
  field: string,
  accept: readonly AddressKind[],
  error: 'InvalidParameter' | 'SmsInvalidTo',
): void {
  try {
    parseAddress(value, { field, accept });
  } catch (e) {
    if (e instanceof AddressError) throw new AppError(error, e.message);
    throw e;
  }
}

/** SMPP addresses carry no '+' (TON/NPI say international). */
const toSmpp = (address: string) => (address.startsWith('+') ? address.slice(1) : address);

/**
 * The messaging runtime of one node: `send` (API and markup), `receiveMo` (SMPP), `receiveSipMessage`
 * (SIP seam), `start` (subscribe + resume), `close` (graceful). See docs/sms.md.
 */
export class SmsService {
  readonly #deps: SmsServiceDeps;
  readonly #t: Record<keyof typeof SmsTimers, number>;
  readonly #log: Logger;
  readonly #actors = new ActorRegistry<SmsActor>();
  /** normalised provider id → message sid, for live actors. */
  readonly #byProviderId = new Map<string, string>();
  readonly #early = new Map<string, EarlyReceipt>();
  /** Per-message chains: store writes in order; callbacks in order (separately, so a slow hook delays no write). */
  readonly #writes = new Map<string, Promise<unknown>>();
  readonly #callbacks = new Map<string, Promise<unknown>>();
  readonly #evictTimers = new Map<string, NodeJS.Timeout>();
  readonly #extensionCache = new Map<string, { at: number; id: string | null }>();
  readonly #numberCache = new Map<string, { at: number; number: IncomingNumber | null }>();
  /** Sids resumed after a submit was attempted: the carrier may have them, so they are flagged possible duplicates. */
  readonly #resumedSending = new Set<string>();
  readonly #machine;
  #unsubscribe: (() => void) | null = null;
  #clientMessenger: ClientMessenger | null;
  #sweep: NodeJS.Timeout | null = null;
  #closing: Promise<void> | null = null;
  readonly #metrics: SmsMetrics = {
    TextMessageInboundToApp: 0,
    TextMessageInboundToClient: 0,
    TextMessageInboundToProxyOut: 0,
    TextMessageNotFound: 0,
    TextMessageOutbound: 0,
  };

  constructor(deps: SmsServiceDeps) {
    this.#deps = deps;
    const t = { ...SmsTimers, ...deps.timers };
    this.#t = { ...t, RESUME_INTERVAL_MS: t.RESUME_INTERVAL_MS || Math.max(100, Math.floor(t.LEASE_MS / 4)) };
    this.#log = deps.logger;
    this.#clientMessenger = deps.clientMessenger ?? null;
    this.#machine = smsMachine.provide({
      actors: {
        submitSms: fromPromise<SendOutput, SendInput>(({ input }) => this.#submit(input)),
        deliverToClient: fromPromise<SendOutput, SendInput>(({ input, signal }) =>
          this.#deliverToClient(input, signal),
        ),
        handleInbound: fromPromise<void, { sid: string }>(({ input }) => this.#handleInbound(input.sid)),
      },
    });
  }

  /** Subscribes to the carrier link and resumes pending messages; then sweeps periodically. */
  async start(): Promise<void> {
    const link = this.#deps.link;
    if (link) {
      this.#unsubscribe = link.subscribe((e) => this.#onLinkEvent(e));
      link.handleMo((e) => this.#takeMo(e));
    }
    // Nothing is live yet: leases still held under this node's id (a crash with a fixed INSTANCE_ID) are ours to resume.
    await this.#deps.store.releaseClaims(this.#deps.node);
    await this.#resumePending();
    await this.#scheduleSweep();
  }

  /**
   * Next sweep: after RESUME_INTERVAL_MS, or just after the earliest lease another node holds ends
   * (it died: its messages are resumed then, not an interval later).
   */
  async #scheduleSweep(): Promise<void> {
    if (this.#closing) return;
    let delay = this.#t.RESUME_INTERVAL_MS;
    if (this.#deps.link) {
      const next = await this.#deps.store.nextForeignLeaseEnd(this.#deps.node).catch(() => null);
      if (next) delay = Math.max(10, Math.min(delay, next.getTime() - Date.now() + 20));
    }
    if (this.#closing) return;
    this.#sweep = setTimeout(() => {
      this.#sweep = null;
      this.#resumePending()
        .catch((err) => this.#log.error({ err }, 'SMS resume sweep failed'))
        .then(() => this.#scheduleSweep())
        .catch((err) => this.#log.error({ err }, 'SMS resume sweep not scheduled'));
    }, delay);
    this.#sweep.unref();
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

  /** Live actors (tests, metrics). */
  get live(): number {
    return this.#actors.size;
  }

  /** Validates, records (before returning) and starts sending an outbound message. */
  async send(input: SendSmsInput, opts: { trustedFrom?: boolean } = {}): Promise<SmsMessage> {
    if (this.#closing) throw new AppError('Unavailable', 'The SMS service is shutting down');
    const { account } = input;
    if (account.status !== AccountStatus.Active) {
      throw new AppError('AccountNotActive', `Account ${account.sid} is ${account.status}`);
    }
    if (input.body === '') throw new AppError('SmsBodyRequired', 'Body is required and may not be empty');
    if (input.body.length > BODY_MAX) {
      throw new AppError('SmsBodyTooLong', `Body has ${input.body.length} characters; at most ${BODY_MAX}`);
    }
    // The form of From is checked before To can answer "no SMSC": a malformed value is the first fix.
    if (!opts.trustedFrom) checkAddress(input.from, 'From', SMS_FROM_FORMS, 'InvalidParameter');
    const channel = await this.#checkTo(account, input.to);
    const from = opts.trustedFrom ? input.from : await this.#checkFrom(account, input.from);
    const destinationNetworkId = channel === 'smpp' ? await this.#destinationNetworkId(account.sid) : null;
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
    this.#spawn(inputOf(m));
    if (opts.trustedFrom && channel === 'sip') this.#metrics.TextMessageInboundToClient++;
    else this.#metrics.TextMessageOutbound++;
    return m;
  }

  /** MO from the carrier (deliver_sm, reassembled). Exactly one record and one markup run per event. */
  async receiveMo(
    e: Pick<SmppDeliverSmEvent, 'from' | 'to' | 'body' | 'segments'>,
  ): Promise<SmsMessage | null> {
    return this.#receive({
      from: toE164(e.from),
      to: toE164(e.to),
      body: e.body,
      channel: 'smpp',
      segments: e.segments,
    });
  }

  /**
   * SIP seam: a MESSAGE received by the SIP core. To a number → like an MO (the number's SMS
   * markup); to a client login → relayed to that client of the sender's account. Returns the SIP
   * final status to answer with.
   */
  async receiveSipMessage(msg: InboundSipMessage): Promise<number> {
    const to = toE164(msg.to);
    if (isE164(to)) {
      const m = await this.#receive({ from: msg.from, to, body: msg.body, channel: 'sip', segments: 1 });
      return m ? 202 : 404;
    }
    if (!msg.client) return 403;
    const account = await this.#deps.accounts.get(msg.client.accountSid);
    if (!account || account.status !== AccountStatus.Active) return 403;
    try {
      await this.send(
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
      this.#metrics.TextMessageNotFound++;
      return 404;
    }
  }

  /**
   * Graceful stop: refuse new messages, let the link finish what is in flight (unbind), record every
   * outcome, stop the actors and release this node's leases so the next start resumes the rest.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#sweep) clearTimeout(this.#sweep);
      await this.#deps.link?.close();
      this.#unsubscribe?.();
      await this.#drainWrites();
      for (const t of this.#evictTimers.values()) clearTimeout(t);
      for (const r of this.#early.values()) clearTimeout(r.timer);
      this.#actors.stopAll();
      await this.#drainWrites();
      // Callbacks are best effort at shutdown (the spec gives no delivery guarantee): bounded wait.
      const callbacks = Promise.allSettled([...this.#callbacks.values()]);
      await Promise.race([callbacks, new Promise((r) => setTimeout(r, this.#t.CALLBACK_DRAIN_MS).unref())]);
      await this.#deps.store.releaseClaims(this.#deps.node).catch((err) => {
        this.#log.warn({ err }, 'SMS leases not released');
      });
    })();
    return this.#closing;
  }

  /** Resolves when every pending store write has finished (shutdown). */
  async #drainWrites(): Promise<void> {
    while (this.#writes.size > 0) await Promise.allSettled([...this.#writes.values()]);
  }

  // ---------------------------------------------------------------- validation

  async #checkTo(account: Account, to: string): Promise<SmsChannel> {
    if (to.startsWith(CLIENT_PREFIX)) {
      const login = to.slice(CLIENT_PREFIX.length);
      const clients = await this.#deps.clients.list(account.sid);
      if (!login || !clients.some((c) => c.login === login)) {
        throw new AppError('SmsInvalidTo', `To ${to} is not a client of this account`);
      }
      return 'sip';
    }
    checkAddress(to, 'To', SMS_TO_FORMS, 'SmsInvalidTo');
    if (!this.#deps.link) {
      throw new AppError('SmsNotConfigured', 'No SMSC is configured on this service (SMPP_URL)');
    }
    return 'smpp';
  }

  async #checkFrom(account: Account, from: string): Promise<string> {
    const number = isE164(from) ? await this.#numberOf(from) : null;
    if (!number || number.accountSid !== account.sid || !number.smsCapable) {
      throw new AppError(
        'SmsFromNotOwned',
        `From ${from} is not an SMS-capable incoming phone number or short code of account ${account.sid}`,
      );
    }
    return number.phoneNumber;
  }

  /** Sender numbers are looked up on every send: cached briefly (a release shows within NUMBER_CACHE_MS). */
  async #numberOf(e164: string): Promise<IncomingNumber | null> {
    const hit = this.#numberCache.get(e164);
    if (hit && Date.now() - hit.at < this.#t.NUMBER_CACHE_MS) return hit.number;
    const number = await this.#deps.numbers.findByNumber(e164);
    if (this.#numberCache.size >= 10_000) this.#numberCache.clear();
    this.#numberCache.set(e164, { at: Date.now(), number });
    return number;
  }

  async #destinationNetworkId(accountSid: string): Promise<string | null> {
    const hit = this.#extensionCache.get(accountSid);
    if (hit && Date.now() - hit.at < this.#t.EXTENSION_CACHE_MS) return hit.id;
    const cfg = await this.#deps.multiProvider.effectiveMultiProvider(accountSid);
    const raw = cfg?.['outbound-sms']?.[0]?.destination_network_id;
    const id = raw === undefined ? null : String(raw);
    this.#extensionCache.set(accountSid, { at: Date.now(), id });
    return id;
  }

  // ---------------------------------------------------------------- actors

  #spawn(input: SmsInput): SmsActor {
    const actor = createActor(this.#machine, { input });
    actor.on('sms.status', (e) => this.#onStatus(e));
    actor.subscribe({
      next: (snap) => {
        if (snap.status === 'done') this.#retire(input.sid);
        else if (statusOf(snap) === SmsStatus.Sent) this.#armEviction(input.sid);
      },
      error: (err) => this.#log.error({ err, smsSid: input.sid }, 'SMS actor failed'),
    });
    this.#actors.set(input.sid, actor);
    actor.start();
    if (input.status === SmsStatus.Queued && this.#deps.link?.bound) actor.send({ type: 'link.up' });
    return actor;
  }

  /** A final message: forget it once its writes are done. */
  #retire(sid: string): void {
    const tail = this.#writes.get(sid) ?? Promise.resolve();
    void tail.finally(() => this.#evict(sid));
  }

  #armEviction(sid: string): void {
    if (this.#evictTimers.has(sid)) return;
    const t = setTimeout(() => this.#evict(sid), this.#t.RECEIPT_WAIT_MS);
    t.unref();
    this.#evictTimers.set(sid, t);
  }

  #evict(sid: string): void {
    const actor = this.#actors.get(sid);
    if (actor) for (const id of actor.getSnapshot().context.providerIds) this.#byProviderId.delete(id);
    const t = this.#evictTimers.get(sid);
    if (t) clearTimeout(t);
    this.#evictTimers.delete(sid);
    this.#resumedSending.delete(sid);
    this.#actors.evict(sid);
  }

  #onStatus(e: SmsStatusChanged): void {
    if (e.providerIds) {
      for (const id of e.providerIds) this.#byProviderId.set(id, e.sid);
      // Receipts that beat the submit result: deliver them after this transition.
      queueMicrotask(() => {
        for (const id of e.providerIds ?? []) {
          const early = this.#early.get(id);
          if (!early) continue;
          clearTimeout(early.timer);
          this.#early.delete(id);
          this.#routeReceipt(early.event);
        }
      });
    }
    const possibleDuplicate = e.possibleDuplicate === true || this.#resumedSending.has(e.sid);
    const errorCode = e.errorCode;
    this.#chain(this.#writes, e.sid, async () => {
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
      if (updated?.statusCallback && e.to !== SmsStatus.Sending) this.#statusCallback(updated);
    });
  }

  #chain(chains: Map<string, Promise<unknown>>, sid: string, job: () => Promise<void>): void {
    const next = (chains.get(sid) ?? Promise.resolve())
      .then(job)
      .catch((err) => this.#log.error({ err, smsSid: sid }, 'SMS status not recorded'));
    chains.set(sid, next);
    void next.then(() => {
      if (chains.get(sid) === next) chains.delete(sid);
    });
  }

  /** Spec §Events: SMS sent/delivery status, signed and retried by the webhook client. */
  #statusCallback(m: SmsMessage): void {
    const url = m.statusCallback;
    if (!url) return;
    this.#chain(this.#callbacks, m.sid, async () => {
      const account = await this.#deps.accounts.get(m.accountSid);
      if (!account) return;
      const params: Array<[string, string]> = [
        ['MessageSid', m.sid],
        ['SmsSid', m.sid],
        ['MessageStatus', m.status],
        ['SmsStatus', m.status],
        ['AccountSid', m.accountSid],
        ['From', m.from],
        ['To', m.to],
        ['Body', m.body],
        ['ApiVersion', m.apiVersion],
      ];
      if (m.errorCode !== null) params.push(['ErrorCode', String(m.errorCode)]);
      await this.#deps.webhooks.request({
        url,
        method: 'POST',
        params,
        accountSid: m.accountSid,
        authToken: account.authToken,
        // The same event always carries the same token, so receivers can drop a repeat after a restart.
        idempotencyToken: `${m.sid}-${m.status}`,
        context: { smsSid: m.sid },
      });
    });
  }

  // ---------------------------------------------------------------- sending

  async #submit(input: SendInput): Promise<SendOutput> {
    const link = this.#deps.link;
    if (!link) throw failure(false, 30008);
    try {
      const res = await link.submit({
        from: toSmpp(input.from),
        to: toSmpp(input.to),
        body: input.body,
        reference: input.sid,
        beforeSend: () => this.#deps.store.markSubmitAttempted(input.sid),
        ...(input.destinationNetworkId !== null ? { destinationNetworkId: input.destinationNetworkId } : {}),
      });
      return {
        providerIds: res.messageIds.map(normaliseMessageId),
        possibleDuplicate: res.possibleDuplicate,
      };
    } catch (err) {
      if (isSmppError(err)) throw failure(err.commandStatus === CommandStatus.LOCAL_CLOSED, err.errorCode);
      this.#log.error({ err, smsSid: input.sid }, 'submit failed unexpectedly');
      throw failure(false, 30008);
    }
  }

  async #deliverToClient(input: SendInput, signal: AbortSignal): Promise<SendOutput> {
    const messenger = this.#clientMessenger;
    if (!messenger) throw failure(false, 30003);
    const r = await messenger.deliver(
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
    // 404/480: the client is unknown or not registered now; anything else: unknown error.
    throw failure(false, r.status === 404 || r.status === 480 || r.status === 408 ? 30003 : 30008);
  }

  // ---------------------------------------------------------------- carrier events

  #onLinkEvent(e: SmppEvent): void {
    if (this.#closing && e.type !== 'smpp.receipt') return;
    switch (e.type) {
      case 'smpp.linkState':
        if (e.state === 'bound') {
          for (const actor of this.#actors.values()) {
            if (actor.getSnapshot().hasTag(SmsStatus.Queued)) actor.send({ type: 'link.up' });
          }
        }
        return;
      case 'smpp.receipt':
        this.#routeReceipt(e);
        return;
      case 'smpp.deliverSm':
        return; // taken by #takeMo, which the link awaits before answering
    }
  }

  #routeReceipt(e: SmppReceiptEvent): void {
    const id = normaliseMessageId(e.messageId);
    const sid = this.#byProviderId.get(id);
    const actor = sid ? this.#actors.get(sid) : undefined;
    if (actor && sid) {
      this.#recordSegment(actor, sid, id, e);
      actor.send({ type: 'smpp.receipt', messageId: id, outcome: e.outcome, errorCode: e.errorCode });
      return;
    }
    const waiting = this.#early.get(id);
    if (waiting) {
      // Keep the most telling receipt for this id: a final one replaces an intermediate (ENROUTE).
      if (e.outcome !== 'pending') this.#early.set(id, { event: e, timer: waiting.timer });
      return;
    }
    // Not known (yet): the submit result may be a moment behind (other segments of the message still
    // being sent, throttled), or the message was sent before a restart.
    this.#park(id, e, 0, e.matched ? this.#t.EARLY_RECEIPT_LOOKUP_MS : 0);
  }

  #park(id: string, e: SmppReceiptEvent, attempt: number, delayMs: number): void {
    if (this.#early.size >= EARLY_RECEIPTS_MAX) {
      this.#log.warn({ messageId: id }, 'too many unmatched receipts waiting; receipt dropped');
      return;
    }
    const timer = setTimeout(() => {
      const latest = this.#early.get(id)?.event ?? e;
      this.#early.delete(id);
      this.#lookupReceipt(id, latest, attempt).catch((err) =>
        this.#log.error({ err, messageId: id }, 'receipt lookup failed'),
      );
    }, delayMs);
    timer.unref();
    this.#early.set(id, { event: e, timer });
  }

  /** Multi-part messages: each segment's outcome is recorded, so a restart between receipts loses none. */
  #recordSegment(actor: SmsActor, sid: string, id: string, e: SmppReceiptEvent): void {
    const { providerIds, outcomes } = actor.getSnapshot().context;
    if (providerIds.length < 2 || e.outcome === 'pending' || outcomes[id] === e.outcome) return;
    const outcome = e.outcome;
    this.#chain(this.#writes, sid, () => this.#deps.store.recordSegmentOutcome(id, outcome));
  }

  async #lookupReceipt(id: string, e: SmppReceiptEvent, attempt: number): Promise<void> {
    const live = this.#byProviderId.get(id);
    if (live && this.#actors.get(live)) return this.#routeReceipt(e);
    const found = await this.#deps.store.findByProviderId(id);
    const status = found?.message.status;
    if (status !== SmsStatus.Sent) {
      // Not recorded as sent yet (a multi-part submit still going on, or its write in flight): wait more.
      const pending = status === undefined || status === SmsStatus.Queued || status === SmsStatus.Sending;
      if (pending && e.matched && attempt < EARLY_RECEIPT_ATTEMPTS) {
        this.#park(id, e, attempt + 1, this.#t.EARLY_RECEIPT_LOOKUP_MS);
        return;
      }
      this.#log.info({ messageId: id, stat: e.stat, status }, 'receipt for no pending message (ignored)');
      return;
    }
    if (!found) return;
    const m = found.message;
    const actor =
      this.#actors.get(m.sid) ??
      this.#spawn({ ...inputOf(m), providerIds: found.providerIds, outcomes: found.outcomes });
    for (const pid of found.providerIds) this.#byProviderId.set(pid, m.sid);
    this.#recordSegment(actor, m.sid, id, e);
    actor.send({ type: 'smpp.receipt', messageId: id, outcome: e.outcome, errorCode: e.errorCode });
  }

  // ---------------------------------------------------------------- resume and inbound

  async #resumePending(): Promise<void> {
    if (this.#closing || !this.#deps.link) return;
    await this.#deps.store.renewClaims(this.#deps.node, this.#t.LEASE_MS);
    const rows = await this.#deps.store.claimPending(this.#deps.node, this.#t.LEASE_MS, 1000);
    let resumed = 0;
    for (const m of rows) {
      if (this.#actors.get(m.sid)) continue; // our lease lapsed but the actor is live: keep it
      // Only a message whose submit_sm may have reached the carrier can be there twice (also one
      // requeued as `queued` at a shutdown whose in-flight submit_sm got no answer in time).
      if (m.submitAttempted) this.#resumedSending.add(m.sid);
      this.#spawn(inputOf(m));
      resumed++;
    }
    if (resumed) this.#log.info({ resumed }, 'pending SMS resumed');
  }

  /**
   * The link answers the deliver_sm with this outcome, so an MO is acknowledged only once recorded.
   * A brief database outage is retried here (3 attempts, 200 ms doubling), then refused for now
   * (ESME_RX_T_APPN: the SMSC repeats it later). Text the store can never hold (NUL in an 8-bit or
   * UCS-2 body, an unpaired surrogate) is refused for good (ESME_RX_P_APPN).
   */
  async #takeMo(e: SmppDeliverSmEvent): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        if (this.#closing) throw new SmppError(CommandStatus.ESME_RX_T_APPN, 'shutting down');
        await this.receiveMo(e);
        return;
      } catch (err) {
        if (isStoreInputError(err)) {
          this.#log.warn({ err, from: e.from, to: e.to }, 'MO refused: text cannot be stored');
          throw new SmppError(CommandStatus.ESME_RX_P_APPN, err.message);
        }
        if (attempt >= 3 || this.#closing) {
          this.#log.error({ err, from: e.from, to: e.to }, 'MO not recorded; refused for now');
          throw err;
        }
        await new Promise((r) => setTimeout(r, 200 * 2 ** (attempt - 1)));
      }
    }
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
      this.#metrics.TextMessageNotFound++;
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
    this.#metrics.TextMessageInboundToApp++;
    this.#spawn(inputOf(m));
    return m;
  }

  async #handleInbound(sid: string): Promise<void> {
    const message = await this.#deps.store.getAnyAccount(sid);
    const number = message ? await this.#deps.numbers.findByNumber(message.to) : null;
    const account = message ? await this.#deps.accounts.get(message.accountSid) : null;
    if (!message || !number || !account) return;
    await runSmsMarkup(
      {
        webhooks: this.#deps.webhooks,
        applications: this.#deps.applications,
        notifier: this.#deps.notifier,
        sendSms: (s) => this.send({ ...s, direction: SmsDirection.OutboundApi }),
        sendEmail: this.#deps.sendEmail,
        logger: this.#log,
      },
      { message, number, account },
    );
  }
}

function inputOf(m: SmsMessage): SmsInput {
  return {
    sid: m.sid,
    accountSid: m.accountSid,
    from: m.from,
    to: m.to,
    body: m.body,
    channel: m.channel,
    direction: m.direction,
    status: m.status,
    destinationNetworkId: m.destinationNetworkId,
  };
}

function failure(requeue: boolean, errorCode: number | null): SendFailure {
  return {
    requeue,
    errorCode,
    errorMessage:
      errorCode === null ? null : (SmsErrorMessage[errorCode as keyof typeof SmsErrorMessage] ?? null),
  };
}
