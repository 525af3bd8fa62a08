/**
 * Composition of the outgoing webhook client shared by calls and messaging: its failures become
 * Notification records.
 */
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { WebhookMeter } from '../metrics/port.js';
import type { Notifier } from '../notifications/notifier.js';
import { WebhookClient } from '../webhooks/index.js';
import type { Lifecycle } from './lifecycle.js';

export function createWebhooks(
  config: Config,
  logger: Logger,
  notifier: Notifier,
  lifecycle: Lifecycle,
  meter?: WebhookMeter,
): WebhookClient {
  const webhooks = new WebhookClient({
    connectTimeoutMs: config.webhooks.connectTimeoutMs,
    totalTimeoutMs: config.webhooks.totalTimeoutMs,
    retries: config.webhooks.retries,
    blockPrivate: config.webhooks.blockPrivate,
    ...(meter ? { meter } : {}),
    logger: logger.child({ component: 'webhooks' }),
    onFailure: (n) => {
      void notifier.notify({
        accountSid: n.accountSid,
        callSid: n.context.callSid ?? null,
        errorCode: n.errorCode,
        log: n.log,
        messageText: n.messageText,
        requestUrl: n.requestUrl,
        requestMethod: n.requestMethod,
        requestVariables: n.requestVariables,
        responseHeaders: { ...n.responseHeaders },
        responseBody: n.responseBody,
      });
    },
  });
  lifecycle.onClose(async () => webhooks.close());
  return webhooks;
}
