/**
 * What a USSD session actor does to the world, in domain words: the implementations the composition
 * root gives the machine through `setup({ actions, actors })` (`createUssdMachine(effects)`), and that
 * unit tests replace with fakes. Commands never throw; their outcomes come back as SIP events.
 */

import type { UssdContext, UssdFetch } from './ussd.types.js';
import type { UssdReply } from './ussd-markup.js';

/** A fetched markup document, read as one USSD step; `ok: false` was reported as Notifications. */
export type UssdFetchOutcome =
  | { readonly ok: true; readonly reply: UssdReply; readonly documentUrl: string }
  | { readonly ok: false };

export interface UssdEffects {
  /** 180 then 200 (no body) to the handset's INVITE. */
  answer(sid: string): void;
  /** The first message of a push: the INVITE to the USSD gateway with `body`. */
  invite(session: UssdContext, body: string): void;
  /** A message in the session's dialog (SIP INFO). */
  sendInfo(sid: string, body: string): void;
  /** Ends the session: BYE with `body` (or CANCEL / 480 when it was never answered). */
  hangUp(sid: string, body: string): void;
  /**
   * Fetches `request` for the session and reads it as a USSD step; a message over the length
   * limit has been reported (Notification 11100) when this resolves.
   */
  fetchReply(session: UssdContext, request: UssdFetch, signal: AbortSignal): Promise<UssdFetchOutcome>;
}
