/**
 * Status callbacks of outbound messages (spec §Events: SMS sent/delivery status): one POST per
 * recorded status change, in order per message, signed with the account's AuthToken and retried by
 * the shared webhook client.
 */
import type { Logger } from '../../logger.js';
import type { Account } from '../../store/account-store.js';
import type { SmsStatusRecord } from '../../store/sms-store.js';
import type { WebhookClient } from '../../webhooks/index.js';
import { SidChains } from './sid-chains.js';

export interface SmsCallbacksDeps {
  readonly accounts: { get(sid: string): Promise<Account | null> };
  readonly webhooks: Pick<WebhookClient, 'request'>;
  readonly logger: Logger;
}

/** Sends the status callbacks of messages; `drain` bounds the wait for those in flight at shutdown. */
export class SmsCallbacks {
  readonly #deps: SmsCallbacksDeps;
  readonly #chains: SidChains;

  constructor(deps: SmsCallbacksDeps) {
    this.#deps = deps;
    this.#chains = new SidChains((err, sid) =>
      deps.logger.error({ err, smsSid: sid }, 'SMS status callback not sent'),
    );
  }

  /** Queues the callback of the message as recorded (no-op without a StatusCallback). */
  send(m: SmsStatusRecord): void {
    const url = m.statusCallback;
    if (!url) return;
    this.#chains.add(m.sid, async () => {
      const account = await this.#deps.accounts.get(m.accountSid);
      if (!account) return;
      const params: Array<[string, string]> = [
        ['MessageSid', m.sid],
        ['SmsSid', m.sid],
        ['MessageStatus', m.status],
        ['SmsStatus', m.status],
        ['AccountSid', m.accountSid],
        ['From', m.from],
        ['To', m.to],
        ['Body', m.body],
        ['ApiVersion', m.apiVersion],
      ];
      if (m.errorCode !== null) params.push(['ErrorCode', String(m.errorCode)]);
      await this.#deps.webhooks.request({
        url,
        method: 'POST',
        params,
        accountSid: m.accountSid,
        authToken: account.authToken,
        // The same event always carries the same token, so receivers can drop a repeat after a restart.
        idempotencyToken: `${m.sid}-${m.status}`,
        context: { smsSid: m.sid },
      });
    });
  }

  /**
   * Waits for the callbacks in flight, at most `ms`: callbacks are best effort at shutdown (the spec
   * gives no delivery guarantee), and the webhook client is closed after this.
   */
  async drain(ms: number): Promise<void> {
    await Promise.race([this.#chains.settled(), new Promise((r) => setTimeout(r, ms).unref())]);
  }
}
