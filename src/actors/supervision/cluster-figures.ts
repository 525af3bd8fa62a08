/**
 * The cluster's supervisor figures (Supervisor `Scope=cluster`): every node publishes its own
 * counters and gauges to the shared store every few seconds; any node sums them. Duration averages
 * travel as sums and counts so the cluster average is exact; the concurrency maxima are summed
 * (each node's maximum, reached perhaps at different moments: an upper bound of the cluster's).
 */
import type { Logger } from '../../logger.js';
import type { NodeFigures, SupervisorFigureStore } from '../../store/supervisor-figures.js';
import type { SmsMetrics } from '../sms/sms-service.js';
import { averageOf, type CallFigures, type SupervisorView } from './supervisor-view.js';

/** How often a node publishes; its figures expire after three missed publications. */
export const CLUSTER_PUBLISH_MS = 2_000;

type Averages = 'AverageCallDurationInSecondsLast24Hours' | 'AverageCallDurationInSecondsLastHour';

/** What a node publishes: its call figures without the averages, their sums and counts, its SMS counters. */
export type PublishedFigures = Omit<CallFigures, Averages> &
  SmsMetrics & {
    readonly DurationSumLastHour: number;
    readonly DurationCountLastHour: number;
    readonly DurationSumLast24Hours: number;
    readonly DurationCountLast24Hours: number;
  };

export function publishedFigures(view: SupervisorView, sms: Readonly<SmsMetrics> | null): PublishedFigures {
  const {
    AverageCallDurationInSecondsLast24Hours: _day,
    AverageCallDurationInSecondsLastHour: _hour,
    ...calls
  } = view.figures();
  const { hour, day } = view.durationTotals();
  return {
    ...calls,
    TextMessageInboundToApp: sms?.TextMessageInboundToApp ?? 0,
    TextMessageInboundToClient: sms?.TextMessageInboundToClient ?? 0,
    TextMessageInboundToProxyOut: sms?.TextMessageInboundToProxyOut ?? 0,
    TextMessageNotFound: sms?.TextMessageNotFound ?? 0,
    TextMessageOutbound: sms?.TextMessageOutbound ?? 0,
    DurationSumLastHour: hour.sum,
    DurationCountLastHour: hour.count,
    DurationSumLast24Hours: day.sum,
    DurationCountLast24Hours: day.count,
  };
}

/** Members summed across nodes (a node that published an older shape counts 0 for a new member). */
export function sumFigures(nodes: readonly NodeFigures[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const n of nodes)
    for (const [k, v] of Object.entries(n.figures)) out[k] = (out[k] ?? 0) + (Number.isFinite(v) ? v : 0);
  return out;
}

/** Published (or summed) figures as the supervisor's `Metrics` members (averages from sums and counts). */
export function metricsOf(f: Readonly<Record<string, number>>): Record<string, number> {
  const {
    DurationSumLastHour = 0,
    DurationCountLastHour = 0,
    DurationSumLast24Hours = 0,
    DurationCountLast24Hours = 0,
    ...rest
  } = f;
  return {
    ...rest,
    AverageCallDurationInSecondsLast24Hours: averageOf({
      sum: DurationSumLast24Hours,
      count: DurationCountLast24Hours,
    }),
    AverageCallDurationInSecondsLastHour: averageOf({
      sum: DurationSumLastHour,
      count: DurationCountLastHour,
    }),
  };
}

export interface ClusterFiguresDeps {
  readonly store: SupervisorFigureStore;
  readonly instanceId: string;
  /** This node's figures now. */
  readonly local: () => PublishedFigures;
  readonly logger: Logger;
  readonly intervalMs?: number;
  readonly now?: () => number;
}

export class ClusterFigures {
  private timer: NodeJS.Timeout | null = null;
  private readonly intervalMs: number;
  private readonly now: () => number;

  constructor(private readonly deps: ClusterFiguresDeps) {
    this.intervalMs = deps.intervalMs ?? CLUSTER_PUBLISH_MS;
    this.now = deps.now ?? Date.now;
  }

  start(): void {
    if (this.timer) return;
    void this.publish();
    this.timer = setInterval(() => void this.publish(), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.deps.store.remove(this.deps.instanceId).catch(() => undefined);
  }

  /** Every live node's figures, this node's taken now rather than from its last publication. */
  async nodes(): Promise<NodeFigures[]> {
    const own = this.own();
    const others = (await this.deps.store.list()).filter((n) => n.instanceId !== own.instanceId);
    return [own, ...others];
  }

  private own(): NodeFigures {
    return { instanceId: this.deps.instanceId, at: this.now(), figures: { ...this.deps.local() } };
  }

  private async publish(): Promise<void> {
    try {
      await this.deps.store.publish(this.own(), 3 * this.intervalMs);
    } catch (err) {
      // The next tick tries again; until then other nodes see this one's last figures.
      this.deps.logger.warn({ err }, 'supervisor figures not published');
    }
  }
}
