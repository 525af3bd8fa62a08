/**
 * The live SMS actors of this node, one root actor per message, keyed by message sid. An actor
 * leaves memory when its message is final (once its store writes are done), or RECEIPT_WAIT_MS
 * after it was sent: a later receipt restores it from the store (see sms-receipts.ts).
 */
import { type Actor, createActor } from 'xstate';
import type { Logger } from '../../logger.js';
import { type SmsMessage, SmsStatus } from '../../store/sms-store.js';
import { ActorRegistry } from '../runtime.js';
import type { SidChains } from './sid-chains.js';
import type { smsMachine } from './sms.machine.js';
import type { SendFailure, SmsInput, SmsStatusChanged } from './sms.types.js';
import type { SubmitSms } from './sms-sending.js';

/** A live SMS actor (one per message). */
export type SmsActor = Actor<typeof smsMachine>;

/** Spawning and finding live actors: what the receipt, resume and inbound parts need. */
export interface SmsActorSpawner {
  get(sid: string): SmsActor | undefined;
  spawn(input: SmsInput): SmsActor;
}

export interface SmsActorsDeps {
  /** The SMS machine with its invoked actors provided. */
  readonly machine: typeof smsMachine;
  /** Store writes per message: an actor is forgotten only after its last write. */
  readonly writes: SidChains;
  /** True when an SMSC connection is bound: a restored `queued` actor may send at once. */
  readonly linkBound: () => boolean;
  readonly receiptWaitMs: number;
  /** Every `sms.status` an actor emits. */
  readonly onStatus: (e: SmsStatusChanged) => void;
  /** Runs an actor's `sms.submit` command; the outcome goes back to the actor as an event. */
  readonly submit: SubmitSms;
  /** An actor leaves memory; `providerIds` are its message's (none before it was sent). */
  readonly onEvict: (sid: string, providerIds: readonly string[]) => void;
  readonly logger: Logger;
}

/** How an actor starts from a record (new, resumed or restored). */
export function inputOf(m: SmsMessage): SmsInput {
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

/** Spawns, finds and evicts the live SMS actors. */
export class SmsActors implements SmsActorSpawner {
  readonly #deps: SmsActorsDeps;
  readonly #actors = new ActorRegistry<SmsActor>();
  readonly #evictTimers = new Map<string, NodeJS.Timeout>();

  constructor(deps: SmsActorsDeps) {
    this.#deps = deps;
  }

  get(sid: string): SmsActor | undefined {
    return this.#actors.get(sid);
  }

  get size(): number {
    return this.#actors.size;
  }

  spawn(input: SmsInput): SmsActor {
    const actor = createActor(this.#deps.machine, { input });
    actor.on('sms.status', (e) => this.#deps.onStatus(e));
    actor.on('sms.submit', (e) => {
      this.#deps.submit(e.input).then(
        (output) => actor.send({ type: 'smpp.submitted', output }),
        (error: SendFailure) => actor.send({ type: 'smpp.submitFailed', error }),
      );
    });
    actor.subscribe({
      next: (snap) => {
        if (snap.status === 'done') this.#retire(input.sid);
        else if (snap.hasTag(SmsStatus.Sent)) this.#armEviction(input.sid);
      },
      error: (err) => this.#deps.logger.error({ err, smsSid: input.sid }, 'SMS actor failed'),
    });
    this.#actors.set(input.sid, actor);
    actor.start();
    if (input.status === SmsStatus.Queued && this.#deps.linkBound()) actor.send({ type: 'link.up' });
    return actor;
  }

  /** An SMSC connection is bound: queued messages may go. */
  linkUp(): void {
    for (const actor of this.#actors.values()) {
      if (actor.getSnapshot().hasTag(SmsStatus.Queued)) actor.send({ type: 'link.up' });
    }
  }

  /** Shutdown, after the link has closed: no eviction is due any more, every actor is stopped. */
  stopAll(): void {
    for (const t of this.#evictTimers.values()) clearTimeout(t);
    this.#actors.stopAll();
  }

  /** A final message: forget it once its writes are done. */
  #retire(sid: string): void {
    void this.#deps.writes.tail(sid).finally(() => this.#evict(sid));
  }

  #armEviction(sid: string): void {
    if (this.#evictTimers.has(sid)) return;
    const t = setTimeout(() => this.#evict(sid), this.#deps.receiptWaitMs);
    t.unref();
    this.#evictTimers.set(sid, t);
  }

  #evict(sid: string): void {
    const actor = this.#actors.get(sid);
    this.#deps.onEvict(sid, actor ? actor.getSnapshot().context.providerIds : []);
    const t = this.#evictTimers.get(sid);
    if (t) clearTimeout(t);
    this.#evictTimers.delete(sid);
    this.#actors.evict(sid);
  }
}
