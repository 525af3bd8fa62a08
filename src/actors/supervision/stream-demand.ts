/**
 * Who in the cluster watches the live stream, so a node numbers, serialises and relays its call
 * deltas only while someone may see them (docs/decisions.md, "Supervisor live stream on demand").
 *
 * A node is *interested* while it has a subscriber, and for `graceMs` after its last one left (a
 * client that reconnects within it resumes with exactly the deltas it missed). An interested node
 * says so on the relay (`watching: true`) when it becomes interested and again every `announceMs`,
 * and `watching: false` when it stops; a node that hears nothing from a watcher for three
 * announcements forgets it (a node that died). A starting node says hello, and the interested ones
 * answer with their announcement at once instead of at their next one.
 */

/** What the relay carries for the demand (beside the deltas), as JSON. */
export interface DemandMessage {
  readonly node: string;
  readonly watching?: boolean;
  readonly hello?: boolean;
}

export interface DemandOptions {
  /** How often an interested node says so again (ms). */
  readonly announceMs?: number;
  /** How long a node stays interested after its last subscriber left (ms). */
  readonly graceMs?: number;
}

export const DEFAULT_ANNOUNCE_MS = 5_000;
export const DEFAULT_GRACE_MS = 60_000;

/** What a remote announcement changed. */
export type RemoteChange = 'joined' | 'left' | 'none';

export class StreamDemand {
  /** Other nodes watching, with when their claim lapses (epoch ms). */
  private readonly watchers = new Map<string, number>();
  private local = false;
  private grace: NodeJS.Timeout | null = null;
  private readonly ticker: NodeJS.Timeout;
  private readonly announceMs: number;
  private readonly graceMs: number;
  private readonly prefix: string;

  constructor(
    node: string,
    private readonly send: (message: string) => void,
    /** Called when the grace after the last subscriber ran out, or a watcher lapsed. */
    private readonly changed: () => void,
    options: DemandOptions = {},
    private readonly now: () => number = Date.now,
  ) {
    this.announceMs = options.announceMs ?? DEFAULT_ANNOUNCE_MS;
    this.graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
    this.prefix = `{"node":${JSON.stringify(node)},`;
    this.ticker = setInterval(() => this.tick(), this.announceMs);
    this.ticker.unref();
    // After the constructor returns: the caller subscribes to the relay first.
    queueMicrotask(() => this.send(`${this.prefix}"hello":true}`));
  }

  /** Whether anyone, here or on another node, may see this node's deltas. */
  get watched(): boolean {
    return this.local || this.watchers.size > 0;
  }

  /** Whether this node has (or had, within the grace) a subscriber of its own. */
  get interested(): boolean {
    return this.local;
  }

  /** This node's subscriber count changed. */
  subscribers(count: number): void {
    if (count > 0) {
      if (this.grace) clearTimeout(this.grace);
      this.grace = null;
      if (!this.local) {
        this.local = true;
        this.announce();
      }
      return;
    }
    if (!this.local || this.grace) return;
    this.grace = setTimeout(() => {
      this.grace = null;
      this.local = false;
      this.announce();
      this.changed();
    }, this.graceMs);
    this.grace.unref();
  }

  /** Another node's demand message. */
  remote(m: DemandMessage): RemoteChange {
    if (m.hello) {
      if (this.local) this.announce();
      return 'none';
    }
    if (m.watching === true) {
      const known = this.watchers.has(m.node);
      this.watchers.set(m.node, this.now() + 3 * this.announceMs);
      return known ? 'none' : 'joined';
    }
    if (m.watching === false) return this.watchers.delete(m.node) ? 'left' : 'none';
    return 'none';
  }

  close(): void {
    clearInterval(this.ticker);
    if (this.grace) clearTimeout(this.grace);
    this.grace = null;
  }

  private announce(): void {
    this.send(`${this.prefix}"watching":${this.local}}`);
  }

  private tick(): void {
    if (this.local) this.announce();
    const now = this.now();
    let lapsed = false;
    for (const [node, until] of this.watchers)
      if (until < now) {
        this.watchers.delete(node);
        lapsed = true;
      }
    if (lapsed) this.changed();
  }
}
