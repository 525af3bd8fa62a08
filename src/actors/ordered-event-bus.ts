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
  private readonly chains = new Map<string, Promise<void>>();

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
    const next = (this.chains.get(key) ?? Promise.resolve()).then(() => this.run(event, key));
    this.chains.set(key, next);
    // An aggregate with nothing in flight holds no entry (events may follow its end).
    void next.then(() => {
      if (this.chains.get(key) === next) this.chains.delete(key);
    });
  };

  /** Resolves once every event published so far has been observed. */
  async drain(): Promise<void> {
    await Promise.all([...this.chains.values()]);
  }

  private async run(event: E, key: string): Promise<void> {
    for (const observe of this.observers) {
      try {
        // Most observers ignore most events and return nothing: no await (a microtask) for them.
        const pending = observe(event);
        if (pending) await pending;
      } catch (err) {
        this.logger.error(
          { err, [this.label.key]: key, event: event.type },
          `${this.label.kind} observer failed`,
        );
      }
    }
  }
}
