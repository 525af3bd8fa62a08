/**
 * The SIP port: what call actors may ask of the signalling layer, and what they hear back, in
 * domain words. A leg is one side of a call (one SIP dialog), identified by the call sid that owns it.
 *
 * Guarantees (tested in test/integration/sip):
 * - Commands never throw; every outcome comes back as an event.
 * - Exactly one terminal event per leg: `sip.failed`, `sip.bye`, `sip.cancel` or `sip.ended`.
 *   A locally ended leg (hangUp, cancel, reject) gets `sip.ended` at once; CANCEL/487, BYE and a
 *   2xx that raced a CANCEL (ACK + BYE) are finished in the background.
 * - Dialog data in events is plain data (see dialog.ts) that may be stored in a snapshot.
 */
import type { Dialog, PersistedDialog } from './dialog.js';
import type { Flow } from './flow.js';

// The contract's data and its pure parts, so actors need nothing else of this folder: the dialog as
// persisted in a call's snapshot, a connection-oriented flow, and the outbound routing policy
// (plain functions of configuration and registrations; no I/O).
export { type PersistedDialog, persistedDialog } from './dialog.js';
export {
  NoRouteError,
  parseCallTarget,
  planOutgoingRequest,
  TargetError,
} from './routing-policy.js';
export type { Flow };

export interface Party {
  readonly uri: string;
  readonly displayName?: string;
}

/** Everything needed to send the initial INVITE of an outbound leg (see routing-policy.ts). */
export interface PlaceCall {
  readonly requestUri: string;
  readonly from: Party;
  readonly to: Party;
  /** Preloaded Route URIs (outbound proxy, `;lr`). */
  readonly route?: readonly string[];
  /** Extra SIP headers, name → full value. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Digest credentials for a 401/407 from the next hop. */
  readonly credentials?: { readonly username: string; readonly password: string };
  /** SDP offer; omitted for a delayed offer. */
  readonly sdp?: string;
  /** Content-Type of `sdp` when the body is not SDP (a USSD session's first message). */
  readonly contentType?: string;
  /** Reach a registered client over the connection it registered on. */
  readonly flow?: Flow | null;
}

/** A request body that is not SDP (USSD XML in INFO and BYE). */
export interface MessageBody {
  readonly contentType: string;
  readonly content: string;
}

/** An INVITE that starts a new inbound leg. */
export interface InboundInvite {
  readonly legId: string;
  readonly requestUri: string;
  readonly from: Party;
  readonly to: Party;
  readonly callId: string;
  /** Generic headers as received (lower-case names), e.g. for X- headers and Diversion. */
  readonly headers: Readonly<Record<string, string>>;
  /** The INVITE's body: SDP, or what its Content-Type header says (see SipLegs.onInviteWithBody). */
  readonly sdp: string | null;
  readonly source: Flow;
  /** Set when the INVITE carried valid credentials of a client (see Registrar.authenticate). */
  readonly client?: { readonly sid: string; readonly accountSid: string; readonly login: string };
}

export type SipEvent =
  | {
      readonly type: 'sip.ringing';
      readonly legId: string;
      readonly status: number;
      readonly sdp: string | null;
    }
  | {
      readonly type: 'sip.answered';
      readonly legId: string;
      readonly sdp: string | null;
      readonly dialog: Dialog;
      /** X- headers of the 2xx (names as `X-Foo`), for DialSipHeader_* parameters. */
      readonly xHeaders?: Readonly<Record<string, string>>;
    }
  | {
      readonly type: 'sip.failed';
      readonly legId: string;
      readonly status: number;
      readonly reason: string;
      /** Call-ID of the INVITE and X- headers of its final response. */
      readonly callId?: string;
      readonly xHeaders?: Readonly<Record<string, string>>;
    }
  | { readonly type: 'sip.bye'; readonly legId: string }
  | { readonly type: 'sip.cancel'; readonly legId: string }
  | {
      readonly type: 'sip.ended';
      readonly legId: string;
      readonly cause: 'hangup' | 'canceled' | 'rejected' | 'ack-timeout' | 'transport';
    }
  | { readonly type: 'sip.confirmed'; readonly legId: string; readonly dialog: Dialog }
  | { readonly type: 'sip.reinvite'; readonly legId: string; readonly sdp: string | null }
  | {
      readonly type: 'sip.reinviteResult';
      readonly legId: string;
      readonly status: number;
      readonly sdp: string | null;
    }
  | { readonly type: 'sip.info'; readonly legId: string; readonly contentType: string; readonly body: string }
  | {
      readonly type: 'sip.message';
      readonly legId: string;
      readonly contentType: string;
      readonly body: string;
    }
  /**
   * A REFER in the leg's dialog (RFC 3515): the call layer answers it with `answerRefer` and reports
   * the transfer with `notifyRefer`. `target`, `transferor`, `transferee` are the user parts of
   * Refer-To, Contact and To (RFC 5589 §6.1 roles, as Restcomm names them).
   */
  | {
      readonly type: 'sip.refer';
      readonly legId: string;
      readonly referId: string;
      readonly referTo: string;
      readonly target: string | null;
      readonly transferor: string | null;
      readonly transferee: string | null;
    }
  /** The final response to a REFER we sent in the leg's dialog (`refer`). */
  | { readonly type: 'sip.referResult'; readonly legId: string; readonly status: number }
  /**
   * A NOTIFY of the subscription our REFER created: the status line of its message/sipfrag body
   * (null when unreadable), and whether the subscription ended with it.
   */
  | {
      readonly type: 'sip.referNotify';
      readonly legId: string;
      readonly status: number | null;
      readonly terminated: boolean;
    }
  | {
      readonly type: 'sip.messageResult';
      readonly requestId: string;
      readonly status: number;
      readonly reason: string;
    };

/**
 * The implicit subscription of a REFER we accept lasts at most this long (RFC 3515 §2.4.4): its
 * final NOTIFY goes out by then, whatever became of the transfer.
 */
export const REFER_SUBSCRIPTION_SECONDS = 120;

export const TERMINAL_SIP_EVENTS = new Set<SipEvent['type']>([
  'sip.failed',
  'sip.bye',
  'sip.cancel',
  'sip.ended',
]);

/** An out-of-dialog MESSAGE (RFC 3428). */
export interface OutboundMessage extends Omit<PlaceCall, 'sdp'> {
  readonly requestId: string;
  readonly body: string;
  readonly contentType?: string;
}

export interface SipPort {
  /** Starts an outbound leg: `sip.ringing`*, then `sip.answered` or `sip.failed`. */
  placeCall(legId: string, call: PlaceCall): void;
  /** Sends 180 (or 183 with early-media SDP) on an inbound leg. */
  sendProvisional(legId: string, status: 180 | 183, sdp?: string): void;
  /**
   * Answers an inbound leg with 200 + SDP (no body when `sdp` is empty: a USSD session);
   * `sip.confirmed` when the ACK arrives.
   */
  answer(legId: string, sdp: string): void;
  /**
   * Rejects an unanswered inbound leg with a final status (486, 603, 404…). `retryAfter` (seconds)
   * adds Retry-After, for a 503 the caller may try again later (RFC 3261 §21.5.4, §20.33).
   */
  reject(legId: string, status: number, reason?: string, retryAfter?: number): void;
  /**
   * Ends a leg in any state: BYE when answered, CANCEL when ringing out, 480 when ringing in. `body`
   * goes in the BYE (a USSD session's last message).
   */
  hangUp(legId: string, body?: MessageBody): void;
  /** Cancels an unanswered outbound leg. */
  cancel(legId: string): void;
  /** Sends a re-INVITE with a new offer; `sip.reinviteResult` follows. */
  reInvite(legId: string, sdp: string): void;
  /** Sends INFO in the leg's dialog (e.g. application/dtmf-relay). */
  sendInfo(legId: string, contentType: string, body: string): void;
  /**
   * Answers a REFER of the leg (`sip.refer`): 202 accepts it; other statuses refuse it, with
   * `Event: refer` and `reason` in a Reason header (RFC 3326). Unanswered REFERs get 500 after
   * `SipTimers.REFER_ANSWER`.
   */
  answerRefer(legId: string, referId: string, status: number, reason?: string): void;
  /**
   * NOTIFY of an accepted REFER's implicit subscription (RFC 3515 §2.4.4): a message/sipfrag body
   * `SIP/2.0 <status> <reason>`; `terminated` ends the subscription (a final status).
   */
  notifyRefer(legId: string, referId: string, status: number, terminated: boolean): void;
  /**
   * Sends REFER in the leg's dialog (blind transfer of the far end to `referTo`): `sip.referResult`
   * with its final response, then `sip.referNotify` for each NOTIFY of the transfer's progress.
   */
  refer(legId: string, referTo: string): void;
  /** Sends MESSAGE outside any dialog; `sip.messageResult` follows. */
  sendMessage(message: OutboundMessage): void;
  /** The leg's dialog data, when it has one. */
  dialogOf(legId: string): Dialog | null;
  /**
   * Sends BYE in a dialog this node holds no leg for: a call recovered from a node that died (its
   * persisted dialog). Fire and forget; the CSeq jumps ahead of any the dead node may have used.
   */
  endDialog(dialog: PersistedDialog): void;
  /**
   * Why the SIP target policy refuses the first hop of a request to `requestUri` through `route`
   * (link-local or metadata; private when SIP_BLOCK_PRIVATE=true), after DNS resolution; null when
   * it may be contacted. A request sent there anyway fails with a local 403.
   */
  checkTarget(requestUri: string, route?: readonly string[]): Promise<string | null>;
}

/** Notification codes of SIP outcomes a tenant should hear about (docs/errors.md). */
export const SipNotificationCode = {
  /** 13225: a SIP destination (Dial Sip, a proxy) is refused by the target policy. */
  ForbiddenDestination: 13225,
  /** 13250: no media endpoint could be allocated (RTP port range exhausted): the call got 503. */
  NoMediaCapacity: 13250,
} as const;
