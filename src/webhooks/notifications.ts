/**
 * What a failed attempt becomes: the Twilio error code for its kind, the typed `WebhookFailure` the caller
 * gets, and the Notification record data (Restcomm/Twilio Notification resource) passed to `onFailure`.
 */
import { storableHeaders, storableText } from '../storable-text.js';
import type { AttemptFail } from './exchange.js';
import { withoutCredentials } from './outgoing.js';
import { encodeForm } from './signing.js';
import {
  type WebhookErrorCode as Code,
  FailureKind,
  type HttpMethod,
  WebhookErrorCode,
  type WebhookFailure,
  type WebhookNotification,
  type WebhookRequest,
} from './types.js';

const CODE_BY_KIND: Record<FailureKind, Code> = {
  [FailureKind.InvalidUrl]: WebhookErrorCode.InvalidUrl,
  [FailureKind.BlockedByPolicy]: WebhookErrorCode.BadHost,
  [FailureKind.BadHost]: WebhookErrorCode.BadHost,
  [FailureKind.Refused]: WebhookErrorCode.ConnectionFailure,
  [FailureKind.ConnectTimeout]: WebhookErrorCode.ConnectionFailure,
  [FailureKind.Network]: WebhookErrorCode.ConnectionFailure,
  [FailureKind.Timeout]: WebhookErrorCode.RetrievalFailure,
  [FailureKind.HttpStatus]: WebhookErrorCode.RetrievalFailure,
  [FailureKind.TooLarge]: WebhookErrorCode.BodyTooLarge,
  [FailureKind.TooManyRedirects]: WebhookErrorCode.TooManyRedirects,
};

/** Where and how the failed request went, and what has been tried so far. */
export interface Outcome {
  readonly url: string;
  readonly method: HttpMethod;
  readonly attempts: number;
  readonly usedFallback: boolean;
  readonly idempotencyToken: string;
}

/** The caller's view of a failure. */
export function failureResult(f: AttemptFail, o: Outcome): WebhookFailure {
  return {
    ok: false,
    kind: f.kind,
    errorCode: CODE_BY_KIND[f.kind],
    message: f.message,
    ...(f.status === undefined ? {} : { status: f.status }),
    ...(f.headers === undefined ? {} : { headers: f.headers }),
    ...(f.body === undefined ? {} : { body: f.body }),
    ...o,
  };
}

/** One failed attempt as a Notification record; `next` says whether a retry or the fallback follows. */
export function notificationOf(
  req: WebhookRequest,
  f: AttemptFail,
  at: { url: string; method: HttpMethod; token: string; attempt: number; next: WebhookNotification['next'] },
  now: Date,
): WebhookNotification {
  return {
    accountSid: req.accountSid,
    errorCode: CODE_BY_KIND[f.kind],
    log: at.next === 'none' ? 0 : 1,
    kind: f.kind,
    messageText: storableText(f.message),
    requestUrl: withoutCredentials(at.url),
    requestMethod: at.method,
    requestVariables: encodeForm(req.params),
    responseStatus: f.status ?? null,
    // What the server sent is kept readable and storable (no NUL), never dropped with the record.
    responseHeaders: storableHeaders(f.headers ?? {}),
    responseBody: storableText(f.body ?? ''),
    attempt: at.attempt,
    next: at.next,
    idempotencyToken: at.token,
    context: req.context ?? {},
    at: now,
  };
}
