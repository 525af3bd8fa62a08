/**
 * The interpreter's `<Sms>` and `<Email>` during a call, on the messaging services: the
 * same path as the REST API, so the same validation, records and callbacks. A refusal (From not a
 * number of the account, SMTP not configured…) becomes a Notification with the API error's code
 * and the verb's outcome `failed`; the call goes on.
 */

import type { AccountService } from '../../actors/account/account-service.js';
import type { SmsService } from '../../actors/sms/sms-service.js';
import type { EmailService } from '../../email/email-service.js';
import { AppError, ErrorCatalog } from '../../errors.js';
import { newSid, SidPrefix } from '../../ids.js';
import type { NotifyInput } from '../../notifications/notifier.js';
import type { EmailOutcome, EmailRequest, SmsOutcome, SmsRequest } from '../interpreter/services.js';

export class MessagingBridge {
  constructor(
    private readonly deps: {
      readonly sms: SmsService;
      readonly email: EmailService;
      readonly accounts: Pick<AccountService, 'get'>;
      readonly notify: (n: NotifyInput) => unknown;
      /** From of an `<Email>` without one (SMTP_FROM, else no-reply@ the default domain). */
      readonly defaultEmailFrom: string;
    },
  ) {}

  async sendSms(r: SmsRequest): Promise<SmsOutcome> {
    try {
      const account = await this.deps.accounts.get(r.accountSid);
      if (!account) throw new AppError('NotFound', `Account ${r.accountSid} not found`);
      const m = await this.deps.sms.send({
        account,
        from: r.from,
        to: r.to,
        body: r.body,
        statusCallback: r.statusCallback,
      });
      const status =
        m.status === 'sending' || m.status === 'sent' || m.status === 'queued' ? m.status : 'failed';
      return { sid: m.sid, status };
    } catch (err) {
      this.refused(r.accountSid, r.callSid, '<Sms>', err);
      return { sid: '', status: 'failed' };
    }
  }

  async sendEmail(r: EmailRequest): Promise<EmailOutcome> {
    const sid = newSid(SidPrefix.Email);
    try {
      await this.deps.email.send({
        from: r.from ?? this.deps.defaultEmailFrom,
        to: r.to,
        cc: r.cc,
        bcc: r.bcc,
        subject: r.subject ?? '',
        body: r.body,
        type: r.type,
        accountSid: r.accountSid,
      });
      return { sid, status: 'sent' };
    } catch (err) {
      this.refused(r.accountSid, r.callSid, '<Email>', err);
      return { sid, status: 'failed' };
    }
  }

  private refused(accountSid: string, callSid: string, verb: string, err: unknown): void {
    this.deps.notify({
      accountSid,
      callSid,
      errorCode: err instanceof AppError ? err.code : ErrorCatalog.Internal.code,
      log: 0,
      messageText: `${verb} failed: ${err instanceof Error ? err.message : String(err)}`,
    });
  }
}
