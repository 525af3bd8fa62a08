/**
 * notify(): how the runtime and the API write Notifications (spec §Notification). One row per event;
 * MoreInfo points at the error code's documentation. Writing never throws at the caller: a failed
 * write is logged, the call or request goes on.
 */
import { moreInfoUrl } from '../errors.js';
import { newSid, SidPrefix } from '../ids.js';
import type { Logger } from '../logger.js';
import { storableText } from '../storable-text.js';
import type { Notification, NotificationStore } from '../store/notification-store.js';

export interface NotifyInput {
  readonly accountSid: string;
  readonly callSid?: string | null;
  readonly errorCode: number;
  /** 0 error (default), 1 warning. */
  readonly log?: 0 | 1;
  readonly messageText: string;
  readonly requestUrl?: string | null;
  readonly requestMethod?: string | null;
  /** Variables sent to the customer's server (or to the API), as pairs or an encoded string. */
  readonly requestVariables?: ReadonlyArray<readonly [string, string]> | string | null;
  readonly responseHeaders?: Record<string, string> | string | null;
  readonly responseBody?: string | null;
  readonly apiVersion?: string | null;
}

/** Bodies and variables are capped so one bad webhook cannot fill the table. */
const MAX_TEXT = 64 * 1024;
const SECRET_PARAMS = /^(password|authtoken|auth_token)$/i;

export class Notifier {
  constructor(
    private readonly store: NotificationStore,
    private readonly logger: Logger,
    /** Base of the MoreInfo links (the server's own error reference); '' keeps them relative. */
    private readonly publicUrl = '',
  ) {}

  async notify(input: NotifyInput): Promise<Notification | null> {
    const at = new Date();
    const n: Notification = {
      sid: newSid(SidPrefix.Notification),
      accountSid: input.accountSid,
      callSid: input.callSid ?? null,
      apiVersion: input.apiVersion ?? '2012-04-24',
      log: input.log ?? 0,
      errorCode: input.errorCode,
      moreInfo: moreInfoUrl(this.publicUrl, input.errorCode),
      messageText: cap(input.messageText) ?? '',
      messageDate: at,
      requestUrl: cap(input.requestUrl ?? null),
      requestMethod: input.requestMethod ?? null,
      requestVariables: cap(encodeVariables(input.requestVariables)),
      responseHeaders: cap(encodeHeaders(input.responseHeaders)),
      responseBody: cap(input.responseBody ?? null),
      dateCreated: at,
      dateUpdated: at,
    };
    try {
      await this.store.insert(n);
      return n;
    } catch (e) {
      this.logger.error(
        { err: e, accountSid: n.accountSid, errorCode: n.errorCode },
        'notification not written',
      );
      return null;
    }
  }
}

/**
 * Capped and storable: the text often quotes what a customer's server or a carrier sent, and a NUL
 * or unpaired surrogate in it would make the store refuse the one record that explains the failure.
 */
function cap(text: string | null): string | null {
  if (text === null) return null;
  const clean = storableText(text);
  return clean.length <= MAX_TEXT ? clean : `${clean.slice(0, MAX_TEXT)}…`;
}

function encodeVariables(v: NotifyInput['requestVariables']): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string') return v;
  return v
    .map(
      ([k, value]) => `${encodeURIComponent(k)}=${encodeURIComponent(SECRET_PARAMS.test(k) ? '***' : value)}`,
    )
    .join('&');
}

function encodeHeaders(h: NotifyInput['responseHeaders']): string | null {
  if (h === undefined || h === null) return null;
  if (typeof h === 'string') return h;
  return Object.entries(h)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\n');
}
