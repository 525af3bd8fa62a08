/**
 * Public types of the webhook client: requests, results, typed failures and the notification each
 * failure produces. Error codes follow Twilio's catalogue (https://www.twilio.com/docs/api/errors) so
 * Notification records read the same as Twilio's and Restcomm's.
 */
import type { Params } from './signing.js';
import type { RetryClass } from './url-policy.js';

export type HttpMethod = 'GET' | 'POST';

/** Twilio error codes used for webhook failures (see docs/webhooks.md for the mapping). */
export const WebhookErrorCode = {
  /** 11100 Invalid URL format. */
  InvalidUrl: 11100,
  /** 11200 HTTP retrieval failure: non-2xx status, read/total timeout, protocol error. */
  RetrievalFailure: 11200,
  /** 11205 HTTP connection failure: refused, reset, connect timeout. */
  ConnectionFailure: 11205,
  /** 11210 HTTP bad host name: DNS failure, or a host refused by the URL policy. */
  BadHost: 11210,
  /** 11215 HTTP too many redirects. */
  TooManyRedirects: 11215,
  /** 11750 Response body too large. */
  BodyTooLarge: 11750,
} as const;
export type WebhookErrorCode = (typeof WebhookErrorCode)[keyof typeof WebhookErrorCode];

/** What went wrong, as data. */
export const FailureKind = {
  InvalidUrl: 'invalid-url',
  BlockedByPolicy: 'blocked-by-policy',
  BadHost: 'bad-host',
  Refused: 'refused',
  ConnectTimeout: 'connect-timeout',
  Timeout: 'timeout',
  Network: 'network',
  HttpStatus: 'http-status',
  TooLarge: 'too-large',
  TooManyRedirects: 'too-many-redirects',
} as const;
export type FailureKind = (typeof FailureKind)[keyof typeof FailureKind];

export interface WebhookRequest {
  /** Target URL; may carry a `#ct=&rt=&tt=&rc=&rp=` fragment, stripped before sending and signing. */
  readonly url: string;
  readonly method: HttpMethod;
  /** Ordered form parameters; names may repeat. POST: the form body. GET: appended to the query. */
  readonly params: Params;
  readonly accountSid: string;
  /** Signing key (the account's AuthToken). Never logged. */
  readonly authToken: string;
  /** Same value on every attempt (and on the fallback); generated when absent. */
  readonly idempotencyToken?: string;
  readonly fallback?: { readonly url: string; readonly method: HttpMethod } | null;
  /** Defaults for this request, below the URL fragment in precedence. */
  readonly timeouts?: { readonly connectMs?: number; readonly readMs?: number; readonly totalMs?: number };
  /** Correlation data copied into notifications (callSid, smsSid...). */
  readonly context?: Readonly<Record<string, string>>;
}

interface Outcome {
  /** The URL of the last request made (fragment removed; after redirects). */
  readonly url: string;
  readonly method: HttpMethod;
  /** Attempts made in total, primary and fallback. */
  readonly attempts: number;
  readonly usedFallback: boolean;
  readonly idempotencyToken: string;
}

export interface WebhookSuccess extends Outcome {
  readonly ok: true;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** Response body as UTF-8 text, at most `maxBodyBytes`. */
  readonly body: string;
  readonly contentType: string | null;
}

export interface WebhookFailure extends Outcome {
  readonly ok: false;
  readonly kind: FailureKind;
  readonly errorCode: WebhookErrorCode;
  readonly message: string;
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

export type WebhookResult = WebhookSuccess | WebhookFailure;

/** Everything a Notification record needs (Restcomm/Twilio Notification resource fields). */
export interface WebhookNotification {
  readonly accountSid: string;
  readonly errorCode: WebhookErrorCode;
  /** 0 = error, 1 = warning (Twilio `Log`). A failure that is followed by a retry or fallback is a warning. */
  readonly log: 0 | 1;
  readonly kind: FailureKind;
  readonly messageText: string;
  readonly requestUrl: string;
  readonly requestMethod: HttpMethod;
  /** The form-encoded variables sent. */
  readonly requestVariables: string;
  readonly responseStatus: number | null;
  readonly responseHeaders: Readonly<Record<string, string>>;
  readonly responseBody: string;
  readonly attempt: number;
  /** What the client does next: retry the same URL, try the fallback URL, or give up. */
  readonly next: 'retry' | 'fallback' | 'none';
  readonly idempotencyToken: string;
  readonly context: Readonly<Record<string, string>>;
  readonly at: Date;
}

export type { RetryClass };
