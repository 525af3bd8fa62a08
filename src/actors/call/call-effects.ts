/**
 * What a call actor does to the world, in domain words: the implementations the composition root
 * gives the call machine through `setup({ actions, actors })` (`createCallMachine(effects)`), and
 * that machine unit tests replace with fakes. Commands return nothing and never throw: their
 * outcomes come back to the actor as events (SIP port guarantee). The `Promise` members are waits;
 * the machine invokes them as actors, so leaving the state aborts them through `signal`.
 */
import type { PersistedDialog, PlaceCall } from '../../sip/port.js';
import type {
  CallApp,
  CallContext,
  CallEvent,
  MarkupTarget,
  ReferPlan,
  ReferRequest,
  Transfer,
} from './call.types.js';

/** Why an outbound leg was not placed: the SIP-like status the leg fails with. */
export class PlacementError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    /** A more specific Notification than the generic failure one was already written. */
    readonly notified = false,
  ) {
    super(reason);
  }
}

/** Why a REFER is refused: the SIP status it is answered with and the Reason text. */
export class ReferRefusal extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/** How long a new endpoint may take before the call fails. */
export const ENDPOINT_TIMEOUT_MS = 5_000;

/** A media endpoint could not be set up (`reason` from the engine: `no-port`, or `timeout`). */
export class MediaSetupError extends Error {
  constructor(
    readonly reason: string,
    sid: string,
  ) {
    super(`media endpoint for ${sid} failed: ${reason}`);
  }
}

export interface CallEffects {
  // ---- SIP -------------------------------------------------------------------------------------
  /** 180 on an inbound leg. */
  ring(sid: string): void;
  /** 200 with our SDP on an inbound leg. */
  answer(sid: string, sdp: string): void;
  reject(sid: string, status: number, reason?: string, retryAfterSeconds?: number): void;
  cancel(sid: string): void;
  hangUp(sid: string): void;
  /** Sends the INVITE of an outbound leg. */
  invite(sid: string, request: PlaceCall): void;
  /** BYE in a dialog this node holds no leg for (a call restored from a node that died). */
  endDialog(dialog: PersistedDialog): void;

  // ---- media -----------------------------------------------------------------------------------
  /**
   * Creates the endpoint of an inbound leg answering `remoteSdp`; the outcome comes back to the
   * actor as `media.endpointReady` or `media.endpointFailed` (or `media.lost`).
   */
  createEndpoint(sid: string, remoteSdp: string | null): void;
  /** The far end's answer SDP for our endpoint (outbound legs). */
  applyRemoteSdp(sid: string, sdp: string): void;
  setMuted(sid: string, muted: boolean): void;
  unbridge(a: string, b: string): void;
  /** Releases the leg's endpoint, if any. */
  releaseMedia(sid: string): void;

  // ---- the app running the call ----------------------------------------------------------------
  /**
   * Starts what runs the call (markup interpreter or client bridge) and reports its end to the actor
   * as `app.done`. Replaces a running app of the same call.
   */
  startApp(call: CallContext, app: CallApp, send: (event: CallEvent) => void): void;
  /** Redirects the running markup (REST redirect); false when no markup runs. */
  redirectApp(sid: string, to: MarkupTarget): boolean;
  /** The call ended: the running app winds down (action callbacks, recordings). */
  endApp(sid: string): void;

  // ---- transfer (REFER, RFC 3515) ------------------------------------------------------------------
  /** Answers the leg's pending REFER: 202 accepts it; else refused with `reason`. */
  answerRefer(sid: string, referId: string, status: number, reason?: string): void;
  /** NOTIFY of the leg's accepted REFER: the transfer's SIP status as message/sipfrag. */
  notifyRefer(sid: string, referId: string, status: number, terminated: boolean): void;
  /**
   * Hands the transferee leg its new markup (`app.transfer` to its actor), after the transferor's
   * transition: the transferee's old app stops and must find the transferor detached.
   */
  transfer(transferee: string, transfer: Transfer, app: MarkupTarget): void;
  /** Sends REFER in the leg's dialog (`<Refer>`). */
  refer(sid: string, referTo: string): void;

  // ---- admission and Notifications --------------------------------------------------------------
  releaseAdmission(accountSid: string, sid: string): void;
  /** The RTP port range is exhausted: the account hears why its call was refused. */
  notifyNoMedia(call: CallContext, placing: boolean): void;

  // ---- waits (invoked actors) -------------------------------------------------------------------
  /** Waits for a REST admission slot (per-account CPS and concurrency, FIFO). */
  admit(accountSid: string, sid: string, signal: AbortSignal): Promise<void>;
  /**
   * Resolves an outbound leg's target, creates its endpoint and plans the INVITE (with our SDP);
   * rejects with a {@link PlacementError}.
   */
  place(call: CallContext, signal: AbortSignal): Promise<PlaceCall>;
  /**
   * What an accepted REFER of `call` does: the leg it is bridged with, and the ReferUrl of the
   * number originally dialled; rejects with a {@link ReferRefusal}.
   */
  planRefer(call: CallContext, refer: ReferRequest, signal: AbortSignal): Promise<ReferPlan>;
  /** DTMF to the far end in the dialog (SIP INFO), `w` = half a second. */
  sendDigits(sid: string, digits: string, signal: AbortSignal): Promise<void>;
}
