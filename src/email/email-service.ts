/**
 * Email over SMTP (spec §Email message, §Endpoints › Email): one nodemailer
 * transport built from `SMTP_URL` (`smtp://user:pass@host:port`, `smtps://` for implicit TLS; any
 * nodemailer connection URL option such as `?pool=true` works). Used by `POST /Email/Messages` and
 * by the `<Email>` verb of SMS markup. nodemailer is imported here only.
 */
import nodemailer, { type Transporter } from 'nodemailer';
import { AppError } from '../errors.js';
import type { Logger } from '../logger.js';

/** Spec §Limits: Subject up to 160 characters. */
export const SUBJECT_MAX = 160;

/** One email to send (spec §Email parameters). */
export interface EmailMessage {
  readonly from: string;
  /** One or more addresses, comma-separated. */
  readonly to: string;
  readonly cc?: string | null;
  readonly bcc?: string | null;
  readonly subject: string;
  readonly body: string;
  /** Content-Type of the mail (spec `Type`), e.g. `text/html`; default `text/plain`. */
  readonly type?: string | null;
  /** Correlation for logs only. */
  readonly accountSid?: string;
}

/** Outcome of a sent email. */
export interface EmailSent {
  readonly dateSent: Date;
  /** The Message-ID header the transport assigned. */
  readonly messageId: string;
}

/** `SMTP_URL` / `SMTP_FROM` (config.smtp). */
export interface EmailSettings {
  readonly url: string | null;
  /** Default From for `<Email>` without a `from` attribute (`SMTP_FROM`). */
  readonly from: string | null;
}

/** Sends mail, or throws AppError EmailNotConfigured (no SMTP_URL) / EmailSendFailed (SMTP refused). */
export class EmailService {
  readonly #transport: Transporter | null;
  readonly #logger: Logger;
  readonly defaultFrom: string | null;

  constructor(settings: EmailSettings, logger: Logger) {
    this.#transport = settings.url ? nodemailer.createTransport(settings.url) : null;
    this.defaultFrom = settings.from;
    this.#logger = logger;
  }

  /** True when SMTP_URL is set. */
  get configured(): boolean {
    return this.#transport !== null;
  }

  async send(m: EmailMessage): Promise<EmailSent> {
    if (!this.#transport) {
      throw new AppError('EmailNotConfigured', 'Email is not configured on this service: set SMTP_URL');
    }
    const html = m.type ? /html/i.test(m.type) : false;
    try {
      const info = await this.#transport.sendMail({
        from: m.from,
        to: m.to,
        cc: m.cc ?? undefined,
        bcc: m.bcc ?? undefined,
        subject: m.subject,
        ...(html ? { html: m.body } : { text: m.body }),
        // A Type that is neither plain text nor HTML is passed through as the part's Content-Type.
        ...(m.type && !html && !/^text\/plain\b/i.test(m.type)
          ? { headers: { 'Content-Type': m.type } }
          : {}),
      });
      return { dateSent: new Date(), messageId: String(info.messageId ?? '') };
    } catch (err) {
      this.#logger.warn({ err, accountSid: m.accountSid }, 'email not sent');
      throw new AppError('EmailSendFailed', `The SMTP server refused the email: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  /** Idempotent. */
  close(): void {
    this.#transport?.close();
  }
}
