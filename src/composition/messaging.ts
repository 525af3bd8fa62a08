/**
 * Composition of messaging: email over SMTP, the SMPP carrier link (when SMPP_URL is set) and the SMS
 * service. The SIP seams (client messenger, MESSAGE in) are wired by voice.ts once SIP runs; the SMSC
 * binds and pending messages resume last, after the HTTP app serves (`startMessaging`).
 */
import type { AccountService } from '../actors/account/account-service.js';
import { SmsService } from '../actors/sms/sms-service.js';
import type { Config } from '../config.js';
import { EmailService } from '../email/email-service.js';
import type { Logger } from '../logger.js';
import { SmppCarrierLink } from '../smpp/link.js';
import { parseSmppUrls } from '../smpp/url.js';
import { PgSmsStore } from '../store/postgres/sms-repository.js';
import type { WebhookClient } from '../webhooks/index.js';
import type { Lifecycle } from './lifecycle.js';
import type { Connections, Repositories } from './stores.js';

export interface Messaging {
  readonly sms: SmsService;
  readonly smsStore: PgSmsStore;
  readonly email: EmailService;
  /** The SMPP carrier link, or null without SMPP_URL. */
  readonly smppLink: SmppCarrierLink | null;
}

export function composeMessaging(
  config: Config,
  logger: Logger,
  deps: {
    readonly connections: Connections;
    readonly repositories: Repositories;
    readonly accounts: AccountService;
    readonly webhooks: WebhookClient;
  },
  lifecycle: Lifecycle,
): Messaging {
  const { db } = deps.connections;
  const { numbers, applications, clients, profileResolver, notifier } = deps.repositories;
  const { accounts, webhooks } = deps;
  const email = new EmailService(config.smtp, logger.child({ component: 'email' }));
  lifecycle.onClose(() => email.close());
  const smsStore = new PgSmsStore(db);
  const smppLink = config.smpp.urls.length
    ? new SmppCarrierLink(parseSmppUrls(config.smpp.urls), {
        logger: logger.child({ component: 'smpp' }),
        // A receipt for an id this process never submitted (sent before a restart) is handed to the
        // SMS service after 5 s (not the link's 120 s default); the service finds it in Postgres.
        earlyReceiptTtlMs: 5_000,
      })
    : null;
  const sms = new SmsService({
    store: smsStore,
    link: smppLink,
    // SIP seam: the SIP core calls sms.useClientMessenger(...) once it runs (docs/sms.md "SIP seams").
    clientMessenger: null,
    numbers,
    applications,
    clients,
    multiProvider: profileResolver,
    accounts,
    webhooks,
    notifier,
    sendEmail: (e) =>
      email.send({
        from: e.from ?? config.smtp.from ?? `no-reply@${config.organization.defaultDomain}`,
        to: e.to,
        cc: e.cc,
        bcc: e.bcc,
        subject: e.subject,
        body: e.body,
        type: e.type,
        accountSid: e.account.sid,
      }),
    logger: logger.child({ component: 'sms' }),
    node: config.instanceId,
    timers: { LEASE_MS: config.smpp.leaseMs },
  });
  return { sms, smsStore, email, smppLink };
}

/** Binds the SMSCs and resumes pending messages; SMS closes before the HTTP server does. */
export async function startMessaging({ sms, smppLink }: Messaging, lifecycle: Lifecycle): Promise<void> {
  lifecycle.onClose(() => sms.close());
  smppLink?.start();
  await sms.start();
}
