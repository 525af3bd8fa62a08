/**
 * Prometheus metrics (prom-client). Counters are fed through the meters of port.ts, each from one
 * place (the call actors' metrics observer, the SIP stack's wire boundary, the webhook client);
 * figures other parts already keep (registrations, SMS counters, media endpoints, SMPP links) are
 * read at scrape time through `observe()`. One registry per server so tests and several servers in
 * one process do not share series.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { CallMeter, SipMeter, StoreMeter, WebhookMeter } from './port.js';
import { type MetricSources, observeSources } from './sources.js';

export type { MetricSources } from './sources.js';

export interface Metrics {
  readonly registry: Registry;
  readonly calls: CallMeter;
  readonly sip: SipMeter;
  readonly webhooks: WebhookMeter;
  readonly stores: StoreMeter;
  /** Adds the scrape-time figures of parts composed after the metrics (each source optional). */
  observe(sources: MetricSources): void;
  /** The text exposition format of every series, for `GET /metrics`. */
  exposition(): Promise<{ contentType: string; body: string }>;
}

/** Methods reported by name; anything else is `OTHER`, so a peer cannot mint label values. */
const SIP_METHODS = new Set([
  'INVITE',
  'ACK',
  'BYE',
  'CANCEL',
  'REGISTER',
  'OPTIONS',
  'INFO',
  'MESSAGE',
  'NOTIFY',
  'SUBSCRIBE',
  'REFER',
  'UPDATE',
  'PRACK',
  'PUBLISH',
]);

const statusClass = (status: number) =>
  status >= 100 && status < 700 ? `${Math.floor(status / 100)}xx` : 'invalid';

export function createMetrics(): Metrics {
  const registry = new Registry();
  // Process figures (CPU, memory, GC, handles) and the event-loop lag, under our prefix.
  collectDefaultMetrics({ register: registry, prefix: 'switchboard_' });
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
  const sipRequests = new Counter({
    name: 'switchboard_sip_requests_total',
    help: 'SIP requests on the wire (retransmissions included), by direction and method',
    labelNames: ['direction', 'method'] as const,
    registers: [registry],
  });
  const sipResponses = new Counter({
    name: 'switchboard_sip_responses_total',
    help: 'SIP responses on the wire (retransmissions included), by direction and status class',
    labelNames: ['direction', 'class'] as const,
    registers: [registry],
  });
  const webhookSeconds = new Histogram({
    name: 'switchboard_webhook_request_seconds',
    help: 'Webhook deliveries, retries and fallback included, by outcome',
    labelNames: ['outcome'] as const,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30],
    registers: [registry],
  });
  const webhookFailures = new Counter({
    name: 'switchboard_webhook_failures_total',
    help: 'Webhook deliveries that failed, by failure kind',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const storeErrors = new Counter({
    name: 'switchboard_store_errors_total',
    help: 'Connection-level failures reported by the Postgres and Redis clients',
    labelNames: ['store'] as const,
    registers: [registry],
  });
  // Every SIP message and every call counts: a labelled child per label values is looked up by a
  // string key instead of prom-client hashing the label object each time. Every label set is
  // bounded (directions, known methods + OTHER, status classes, statuses, verbs, outcomes), so are
  // the maps.
  const requestChild = children((direction, method) => sipRequests.labels({ direction, method }));
  const responseChild = children((direction, cls) => sipResponses.labels({ direction, class: cls }));
  const startedOf = children((direction) => started.labels({ direction }));
  const activeOf = children((direction) => active.labels({ direction }));
  const setupOf = children((direction) => setup.labels({ direction }));
  const durationOf = children((direction) => duration.labels({ direction }));
  const endedOf = children((direction, status) => ended.labels({ direction, status }));
  const verbOf = children((verb, outcome) => verbs.labels({ verb, outcome }));
  const webhookSecondsOf = children((outcome) => webhookSeconds.labels({ outcome }));
  return {
    registry,
    stores: {
      connectionError(store) {
        storeErrors.inc({ store });
      },
    },
    sip: {
      request(direction, method) {
        requestChild(direction, SIP_METHODS.has(method) ? method : 'OTHER').inc();
      },
      response(direction, status) {
        responseChild(direction, statusClass(status)).inc();
      },
    },
    webhooks: {
      delivered(seconds, failure) {
        webhookSecondsOf(failure === null ? 'ok' : 'failed').observe(seconds);
        if (failure !== null) webhookFailures.inc({ kind: failure });
      },
    },
    observe(sources) {
      observeSources(registry, sources);
    },
    async exposition() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
    calls: {
      callStarted(direction) {
        startedOf(direction).inc();
        activeOf(direction).inc();
      },
      callAnswered(direction, setupSeconds) {
        setupOf(direction).observe(setupSeconds);
      },
      callEnded(direction, status, durationSeconds, wasActive) {
        endedOf(direction, status).inc();
        if (wasActive) activeOf(direction).dec();
        if (status === 'completed') durationOf(direction).observe(durationSeconds);
      },
      verbFinished(verb, outcome) {
        verbOf(verb, outcome).inc();
      },
    },
  };
}

/** Memoises a child lookup by its (one or two) label values. */
function children<T>(make: (a: string, b: string) => T): (a: string, b?: string) => T {
  const made = new Map<string, T>();
  return (a, b = '') => {
    const key = `${a}\n${b}`;
    let child = made.get(key);
    if (child === undefined) {
      child = make(a, b);
      made.set(key, child);
    }
    return child;
  };
}
