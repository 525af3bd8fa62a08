/** Context, input, events and domain events of a USSD session actor (ussd.machine.ts). */
import type { CallDirection, CallStatus } from '../../store/call-store.js';
import type { HttpMethod } from '../../webhooks/index.js';
import type { UssdReply } from './ussd-markup.js';

/** A markup request to make: the number's USSD URL, a push's Url, or a collect's action. */
export interface UssdFetch {
  readonly url: string;
  readonly method: HttpMethod;
  readonly fallback: { readonly url: string; readonly method: HttpMethod } | null;
  /** Parameters after the session's own (`Digits`). */
  readonly params: ReadonlyArray<readonly [string, string]>;
}

export interface UssdInput {
  readonly sid: string;
  readonly accountSid: string;
  /** `inbound`: a handset's pull; `outbound-api`: a push to the USSD gateway. */
  readonly direction: Extract<CallDirection, 'inbound' | 'outbound-api'>;
  readonly from: string;
  readonly to: string;
  readonly apiVersion: string;
  readonly phoneNumberSid: string | null;
  readonly createdAt: number;
  /** The first markup to fetch. */
  readonly fetch: UssdFetch;
  /** The push's StatusCallback (requested when the session ends). */
  readonly statusCallback: { readonly url: string; readonly method: HttpMethod } | null;
}

export interface UssdContext extends UssdInput {
  /** The markup request in flight or next. */
  readonly pending: UssdFetch;
  /** The URL the current document came from (relative actions resolve against it). */
  readonly documentUrl: string | null;
  /** The message being sent; null before the first fetch. */
  readonly reply: UssdReply | null;
  /** Push: the INVITE to the gateway went out. */
  readonly invited: boolean;
  readonly answeredAt: number | null;
  readonly endedAt: number | null;
  /** The gateway's final status of a failed push INVITE. */
  readonly sipStatus: number | null;
}

/** Events, named by source: the SIP adapter (`sip.*`). Moments carry `at` so the machine stays pure. */
export type UssdEvent =
  | { readonly type: 'sip.confirmed'; readonly at: number }
  | { readonly type: 'sip.answered'; readonly at: number }
  | { readonly type: 'sip.failed'; readonly status: number; readonly at: number }
  | { readonly type: 'sip.info'; readonly body: string; readonly at: number }
  | { readonly type: 'sip.bye'; readonly at: number }
  | { readonly type: 'sip.ended'; readonly at: number };

/** Domain events: the record, the live views and the StatusCallback follow these. */
export type UssdEmitted =
  | { readonly type: 'ussd.answered'; readonly session: UssdContext; readonly at: number }
  | { readonly type: 'ussd.message'; readonly session: UssdContext; readonly at: number }
  | {
      readonly type: 'ussd.ended';
      readonly session: UssdContext;
      readonly status: CallStatus;
      readonly at: number;
    };
