/**
 * Inbound SMS handling: fetch the number's SMS markup (the SMS application's URL,
 * else SmsUrl with SmsMethod and SmsFallbackUrl) and run it. SMS markup allows `<Sms>`, `<Redirect>`
 * and `<Email>` (the parser's SMS mode skips anything else with a 12200 warning). No valid SMS URL →
 * Notification 12003; markup that cannot be parsed → Notification 12100. Fetch failures are
 * recorded by the webhook client (11200/11205/... notifications).
 */
import { type AppError, isAppError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { Notifier } from '../../notifications/notifier.js';
import type { Account } from '../../store/account-store.js';
import type { ApplicationStore } from '../../store/application-store.js';
import type { IncomingNumber } from '../../store/number-store.js';
import type { SmsMessage } from '../../store/sms-store.js';
import type { HttpMethod, WebhookClient, WebhookRequest } from '../../webhooks/index.js';
import { parseMarkup, type VerbNode } from '../interpreter/markup/index.js';

/** Spec §Notification: "no valid SMS request URL configured for the number". */
export const NO_SMS_URL_ERROR = 12003;
/** Twilio 12100: document parse failure. */
export const MARKUP_PARSE_ERROR = 12100;
/** Redirects followed in one inbound message before giving up (a loop guard). */
export const MAX_SMS_REDIRECTS = 10;

export interface SmsMarkupDeps {
  readonly webhooks: Pick<WebhookClient, 'request'>;
  readonly applications: Pick<ApplicationStore, 'get'>;
  readonly notifier: Pick<Notifier, 'notify'>;
  /** Sends a reply (`<Sms>`); validates From like the API does. */
  readonly sendSms: (input: {
    account: Account;
    from: string;
    to: string;
    body: string;
    statusCallback: string | null;
  }) => Promise<SmsMessage>;
  /** Sends an email (`<Email>`). */
  readonly sendEmail: (input: {
    account: Account;
    from: string | null;
    to: string;
    cc: string | null;
    bcc: string | null;
    subject: string;
    body: string;
    type: string;
  }) => Promise<unknown>;
  readonly logger: Logger;
}

/** Where the markup of a number's SMS comes from (the application wins, spec §Incoming phone number). */
export async function smsTargetOf(
  number: IncomingNumber,
  applications: Pick<ApplicationStore, 'get'>,
): Promise<{ url: string; method: HttpMethod; fallback: { url: string; method: HttpMethod } | null } | null> {
  if (number.smsApplicationSid) {
    const app = await applications.get(number.accountSid, number.smsApplicationSid);
    return app?.rcmlUrl && isHttpUrl(app.rcmlUrl)
      ? { url: app.rcmlUrl, method: 'POST', fallback: null }
      : null;
  }
  if (!number.smsUrl || !isHttpUrl(number.smsUrl)) return null;
  return {
    url: number.smsUrl,
    method: number.smsMethod,
    fallback:
      number.smsFallbackUrl && isHttpUrl(number.smsFallbackUrl)
        ? { url: number.smsFallbackUrl, method: number.smsFallbackMethod }
        : null,
  };
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** The parameters of an SMS markup request (Twilio/RCML SMS request names). */
export function smsRequestParams(m: SmsMessage): Array<[string, string]> {
  return [
    ['MessageSid', m.sid],
    ['SmsSid', m.sid],
    ['SmsMessageSid', m.sid],
    ['AccountSid', m.accountSid],
    ['From', m.from],
    ['To', m.to],
    ['Body', m.body],
    ['SmsStatus', m.status],
    ['NumSegments', String(Math.max(1, m.segments))],
    ['ApiVersion', m.apiVersion],
  ];
}

/** Fetches and runs the SMS markup for one received message. Never throws. */
export async function runSmsMarkup(
  deps: SmsMarkupDeps,
  ctx: { readonly message: SmsMessage; readonly number: IncomingNumber; readonly account: Account },
): Promise<void> {
  const { message, number, account } = ctx;
  const log = deps.logger.child({ smsSid: message.sid, accountSid: account.sid });
  const target = await smsTargetOf(number, deps.applications);
  if (!target) {
    await deps.notifier.notify({
      accountSid: account.sid,
      errorCode: NO_SMS_URL_ERROR,
      messageText: `No valid SMS request URL configured for ${number.phoneNumber}: SMS ${message.sid} was not handled`,
      requestVariables: smsRequestParams(message),
    });
    return;
  }
  let request: Pick<WebhookRequest, 'url' | 'method' | 'fallback'> = target;
  for (let hop = 0; hop <= MAX_SMS_REDIRECTS; hop++) {
    const res = await deps.webhooks.request({
      ...request,
      params: smsRequestParams(message),
      accountSid: account.sid,
      authToken: account.authToken,
      context: { smsSid: message.sid },
    });
    if (!res.ok) return; // the webhook client wrote the notification
    const parsed = parseMarkup(res.body, { mode: 'sms' });
    if (!parsed.ok) {
      await deps.notifier.notify({
        accountSid: account.sid,
        errorCode: MARKUP_PARSE_ERROR,
        messageText: `SMS markup from ${res.url} could not be used: ${parsed.error.message}`,
        requestUrl: res.url,
        requestMethod: res.method,
        requestVariables: smsRequestParams(message),
        responseBody: res.body,
      });
      return;
    }
    const next = await runProgram(deps, parsed.program, ctx, res.url);
    if (!next) return;
    request = { url: next.url, method: next.method, fallback: null };
  }
  log.warn({ max: MAX_SMS_REDIRECTS }, 'SMS markup redirected too many times');
  await deps.notifier.notify({
    accountSid: account.sid,
    errorCode: MARKUP_PARSE_ERROR,
    messageText: `SMS markup redirected more than ${MAX_SMS_REDIRECTS} times; stopped`,
  });
}

/** Runs verbs in order; returns the Redirect target, or null when the program ended. */
async function runProgram(
  deps: SmsMarkupDeps,
  program: readonly VerbNode[],
  ctx: { readonly message: SmsMessage; readonly account: Account },
  documentUrl: string,
): Promise<{ url: string; method: HttpMethod } | null> {
  const { message, account } = ctx;
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
  for (const verb of program) {
    try {
      switch (verb.verb) {
        case 'Sms': {
          await deps.sendSms({
            account,
            // Defaults: reply to the sender, from the number that received the message.
            from: str(verb.attrs.from) ?? message.to,
            to: str(verb.attrs.to) ?? message.from,
            body: verb.text ?? '',
            statusCallback: str(verb.attrs.statusCallback),
          });
          // `action`: the markup it returns replaces the rest of this document (TwiML <Sms action>).
          const action = str(verb.attrs.action);
          if (action) {
            return {
              url: new URL(action, documentUrl).toString(),
              method: verb.attrs.method === 'GET' ? 'GET' : 'POST',
            };
          }
          break;
        }
        case 'Email':
          await deps.sendEmail({
            account,
            from: str(verb.attrs.from),
            to: str(verb.attrs.to) ?? '',
            cc: str(verb.attrs.cc),
            bcc: str(verb.attrs.bcc),
            subject: str(verb.attrs.subject) ?? '',
            body: verb.text ?? '',
            type: str(verb.attrs.type) ?? 'text/plain',
          });
          break;
        case 'Redirect':
          return {
            url: new URL(verb.text ?? '', documentUrl).toString(),
            method: verb.attrs.method === 'GET' ? 'GET' : 'POST',
          };
        default:
          break;
      }
    } catch (err) {
      // A verb that cannot be carried out is reported and skipped; the rest of the program runs.
      const code = isAppError(err) ? (err as AppError).code : 20500;
      await deps.notifier.notify({
        accountSid: account.sid,
        errorCode: code,
        messageText: `<${verb.verb}> in SMS markup of ${message.sid} failed: ${(err as Error).message}`,
        requestUrl: documentUrl,
      });
    }
  }
  return null;
}
