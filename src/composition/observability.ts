/**
 * Composition of the operations side: the readiness checks of the stores, SIP and SMPP, and the
 * scrape-time metric sources of the parts composed before the HTTP app (voice adds the media engine's
 * own check and source). What `/health`, `/ready` and `/metrics` serve.
 */
import type { Config } from '../config.js';
import type { ObservabilityDeps } from '../http/routes/observability.js';
import type { Metrics } from '../metrics/prometheus.js';
import type { Readiness } from '../metrics/readiness.js';
import type { SipService } from '../sip/service.js';
import { sql } from '../store/postgres/db.js';
import { redisReady } from '../store/redis/client.js';
import type { Messaging } from './messaging.js';
import type { Connections } from './stores.js';

export interface ObservabilityParts {
  readonly connections: Connections;
  readonly sip: SipService | null;
  readonly messaging: Messaging;
  readonly metrics: Metrics;
  readonly readiness: Readiness;
}

export function composeObservability(config: Config, parts: ObservabilityParts): ObservabilityDeps {
  const { connections, sip, messaging, metrics, readiness } = parts;
  const { db, redis } = connections;
  readiness.add('postgres', async () => {
    await db.query(sql`SELECT 1`);
    return { up: true };
  });
  // The client's own view (connected, handshake done): no round trip, and false at once when the
  // socket drops, while a PING would queue behind the reconnection.
  readiness.add('redis', () => ({ up: redisReady(redis) }));
  if (sip) readiness.add('sip', () => ({ up: sip.bound !== null }));
  const link = messaging.smppLink;
  if (link) {
    // Reported, not required: a carrier outage queues messages, and taking the node out of the
    // load balancer would not bring the SMSC back.
    readiness.add(
      'smpp',
      () => ({
        up: link.bound,
        parts: Object.fromEntries(link.stats().map((c) => [c.name, c.state])),
      }),
      { required: false },
    );
  }

  const { sms } = messaging;
  metrics.observe({
    ...(sip ? { registeredEndpoints: () => sip.registrar.countRegistered() } : {}),
    sms: () => {
      const m = sms.metrics();
      return {
        inbound: {
          app: m.TextMessageInboundToApp,
          client: m.TextMessageInboundToClient,
          proxy_out: m.TextMessageInboundToProxyOut,
          not_found: m.TextMessageNotFound,
        },
        outbound: m.TextMessageOutbound,
        outcomes: sms.outcomes(),
      };
    },
    ...(link ? { smppLinks: () => link.stats() } : {}),
  });
  return { metrics, metricsToken: config.metrics.token, readiness };
}
