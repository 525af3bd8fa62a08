/**
 * Delivery receipts to SMS actors. A receipt names a provider message id (one per segment); the
 * live actor that sent it takes it. A receipt that beats its submit result (other segments of the
 * message still going out, throttled) waits here and is looked up in the store every
 * EARLY_RECEIPT_LOOKUP_MS while the message is pending; one for a message sent before a restart or
 * evicted after RECEIPT_WAIT_MS restores that message's actor from the store. Each segment's final
 * outcome is recorded, so a restart between two receipts loses none.
 */
import type { Logger } from '../../logger.js';
import { normaliseMessageId, type SmppReceiptEvent } from '../../smpp/port.js';
import { SmsStatus, type SmsStore } from '../../store/sms-store.js';
import type { SidChains } from './sid-chains.js';
import { inputOf, type SmsActor, type SmsActorSpawner } from './sms-actors.js';

/** Receipts waiting for their message at most (a flood of unknown ids must not grow memory). */
const EARLY_RECEIPTS_MAX = 10_000;
/**
 * Lookups after the first of a receipt the link matched but the store does not show as sent yet, one
 * every EARLY_RECEIPT_LOOKUP_MS (60 s at the default).
 */
const EARLY_RECEIPT_ATTEMPTS = 40;

export interface SmsReceiptsDeps {
  readonly store: Pick<SmsStore, 'findByProviderId' | 'recordSegmentOutcome'>;
  readonly actors: SmsActorSpawner;
  /** Store writes per message (segment outcomes go in order with status changes). */
  readonly writes: SidChains;
  /** A receipt whose id is not known yet waits this long for the submit result before a store lookup. */
  readonly earlyLookupMs: number;
  readonly logger: Logger;
}

interface EarlyReceipt {
  readonly event: SmppReceiptEvent;
  readonly timer: NodeJS.Timeout;
}

/** Routes receipts to the actors of the messages they belong to. */
export class SmsReceipts {
  readonly #deps: SmsReceiptsDeps;
  /** normalised provider id → message sid, for live actors. */
  readonly #byProviderId = new Map<string, string>();
  readonly #early = new Map<string, EarlyReceipt>();

  constructor(deps: SmsReceiptsDeps) {
    this.#deps = deps;
  }

  /** A message was sent with these provider ids: its receipts go to its actor, including those that came first. */
  register(sid: string, providerIds: readonly string[]): void {
    for (const id of providerIds) this.#byProviderId.set(id, sid);
    // Nearly always none waits: no task to queue per message then.
    if (this.#early.size === 0) return;
    // Receipts that beat the submit result: deliver them after the transition that reported the ids.
    queueMicrotask(() => {
      for (const id of providerIds) {
        const early = this.#early.get(id);
        if (!early) continue;
        clearTimeout(early.timer);
        this.#early.delete(id);
        this.route(early.event);
      }
    });
  }

  /** The message's actor left memory: a later receipt restores it through the store. */
  forget(providerIds: readonly string[]): void {
    for (const id of providerIds) this.#byProviderId.delete(id);
  }

  /** Shutdown: receipts still waiting are not looked up any more (the actors are being stopped). */
  stop(): void {
    for (const r of this.#early.values()) clearTimeout(r.timer);
  }

  /** Takes one receipt from the carrier link. */
  route(e: SmppReceiptEvent): void {
    const id = normaliseMessageId(e.messageId);
    const sid = this.#byProviderId.get(id);
    const actor = sid ? this.#deps.actors.get(sid) : undefined;
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
    this.#park(id, e, 0, e.matched ? this.#deps.earlyLookupMs : 0);
  }

  #park(id: string, e: SmppReceiptEvent, attempt: number, delayMs: number): void {
    if (this.#early.size >= EARLY_RECEIPTS_MAX) {
      this.#deps.logger.warn({ messageId: id }, 'too many unmatched receipts waiting; receipt dropped');
      return;
    }
    const timer = setTimeout(() => {
      const latest = this.#early.get(id)?.event ?? e;
      this.#early.delete(id);
      this.#lookup(id, latest, attempt).catch((err) =>
        this.#deps.logger.error({ err, messageId: id }, 'receipt lookup failed'),
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
    this.#deps.writes.add(sid, () => this.#deps.store.recordSegmentOutcome(id, outcome));
  }

  async #lookup(id: string, e: SmppReceiptEvent, attempt: number): Promise<void> {
    const live = this.#byProviderId.get(id);
    if (live && this.#deps.actors.get(live)) return this.route(e);
    const found = await this.#deps.store.findByProviderId(id);
    const status = found?.message.status;
    if (status !== SmsStatus.Sent) {
      // Not recorded as sent yet (a multi-part submit still going on, or its write in flight): wait more.
      const pending = status === undefined || status === SmsStatus.Queued || status === SmsStatus.Sending;
      if (pending && e.matched && attempt < EARLY_RECEIPT_ATTEMPTS) {
        this.#park(id, e, attempt + 1, this.#deps.earlyLookupMs);
        return;
      }
      this.#deps.logger.info(
        { messageId: id, stat: e.stat, status },
        'receipt for no pending message (ignored)',
      );
      return;
    }
    if (!found) return;
    const m = found.message;
    const actor =
      this.#deps.actors.get(m.sid) ??
      this.#deps.actors.spawn({ ...inputOf(m), providerIds: found.providerIds, outcomes: found.outcomes });
    for (const pid of found.providerIds) this.#byProviderId.set(pid, m.sid);
    this.#recordSegment(actor, m.sid, id, e);
    actor.send({ type: 'smpp.receipt', messageId: id, outcome: e.outcome, errorCode: e.errorCode });
  }
}
