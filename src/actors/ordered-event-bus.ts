/**
 * A domain event bus that runs the events of one aggregate (a call, a conference) through its
 * observers one at a time, in order — a record is written before the callback that reports it, and
 * a connection pool could otherwise reorder the queries — while aggregates stay independent of each
 * other. An observer that throws is logged; the next one still runs.
 */
import type { Logger } from '../logger.js';

export type Observer<E> = (event: E) => void | Promise<void>;

export class OrderedEventBus<E extends { readonly type: string }> {
  private readonly observers: Observer<E>[] = [];
  /**
   * The events of each aggregate with something in flight, oldest first, and the run that works
   * through them: one microtask and one promise per burst of events rather than a promise chain
   * link (and its closures) per event.
   */
  private readonly queues = new Map<string, { readonly events: E[]; readonly done: Promise<void> }>();

  /**
   * `keyOf` names the aggregate an event belongs to; `label` names it in logs (`callSid`, and
   * "call observer failed").
   */
  constructor(
    private readonly logger: Logger,
    private readonly keyOf: (event: E) => string,
    private readonly label: { readonly key: string; readonly kind: string },
  ) {}

  /** Observers run in the order they subscribed. */
  subscribe(observer: Observer<E>): () => void {
    this.observers.push(observer);
    return () => {
      const i = this.observers.indexOf(observer);
      if (i >= 0) this.observers.splice(i, 1);
    };
  }

  publish = (event: E): void => {
    const key = this.keyOf(event);
    const queued = this.queues.get(key);
    if (queued) {
      queued.events.push(event);
      return;
    }
    const events = [event];
    // Observed after the publisher's turn (an actor emits mid-transition), as a promise callback would.
    const done = Promise.resolve().then(() => this.runQueue(key, events));
    this.queues.set(key, { events, done });
  };

  /** Resolves once every event published so far has been observed. */
  async drain(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.done));
  }

  /** Runs an aggregate's events in order, including those published meanwhile; then forgets it. */
  private async runQueue(key: string, events: E[]): Promise<void> {
    // An aggregate with nothing in flight holds no entry (events may follow its end).
    for (let i = 0; i < events.length; i++) {
      const pending = this.run(events[i] as E, key);
      if (pending) await pending;
    }
    this.queues.delete(key);
  }

  /**
   * One event through the observers from `from` on; a promise (for the rest) only once an observer
   * returned one: most ignore most events and return nothing, and cost no await (a microtask).
   */
  private run(event: E, key: string, from = 0): Promise<void> | undefined {
    for (let i = from; i < this.observers.length; i++) {
      let pending: void | Promise<void>;
      try {
        pending = (this.observers[i] as Observer<E>)(event);
      } catch (err) {
        this.failed(err, event, key);
        continue;
      }
      if (pending) return this.finish(pending, event, key, i + 1);
    }
    return undefined;
  }

  /** Waits for an observer's promise, then runs the observers after it. */
  private async finish(pending: Promise<void>, event: E, key: string, from: number): Promise<void> {
    try {
      await pending;
    } catch (err) {
      this.failed(err, event, key);
    }
    const rest = this.run(event, key, from);
    if (rest) await rest;
  }

  private failed(err: unknown, event: E, key: string): void {
    this.logger.error(
      { err, [this.label.key]: key, event: event.type },
      `${this.label.kind} observer failed`,
    );
  }
}
