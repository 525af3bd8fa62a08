/**
 * Prometheus metrics (prom-client), fed only by the actors' metrics observers. One registry per
 * server so tests and several servers in one process do not share series.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { CallMeter } from './port.js';

export interface Metrics {
  readonly registry: Registry;
  readonly calls: CallMeter;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  const started = new Counter({
    name: 'switchboard_calls_started_total',
    help: 'Call legs created, by direction',
    labelNames: ['direction'] as const,
    registers: [registry],
  });
  const ended = new Counter({
    name: 'switchboard_calls_ended_total',
    help: 'Call legs ended, by direction and final status',
    labelNames: ['direction', 'status'] as const,
    registers: [registry],
  });
  const active = new Gauge({
    name: 'switchboard_calls_active',
    help: 'Call legs live on this node',
    labelNames: ['direction'] as const,
    registers: [registry],
  });
  const setup = new Histogram({
    name: 'switchboard_call_setup_seconds',
    help: 'Time from a leg being created to its answer',
    labelNames: ['direction'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'switchboard_call_duration_seconds',
    help: 'Answered time of ended call legs',
    labelNames: ['direction'] as const,
    buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600],
    registers: [registry],
  });
  const verbs = new Counter({
    name: 'switchboard_verbs_total',
    help: 'Markup verbs run, by verb and outcome',
    labelNames: ['verb', 'outcome'] as const,
    registers: [registry],
  });
  return {
    registry,
    calls: {
      callStarted(direction) {
        started.inc({ direction });
        active.inc({ direction });
      },
      callAnswered(direction, setupSeconds) {
        setup.observe({ direction }, setupSeconds);
      },
      callEnded(direction, status, durationSeconds, wasActive) {
        ended.inc({ direction, status });
        if (wasActive) active.dec({ direction });
        if (status === 'completed') duration.observe({ direction }, durationSeconds);
      },
      verbFinished(verb, outcome) {
        verbs.inc({ verb, outcome });
      },
    },
  };
}
