/**
 * Call legs: the SipPort implementation. Each leg is one dialog, UAC (placeCall) or UAS (an
 * inbound INVITE), held in a LegTable by leg id with its live handles; its dialog is plain data the
 * owner may persist. Implements the UA core duties the `sip` package leaves out (RFC 3261 §12-§15):
 * To-tags, 100 Trying (when the first response is late), 2xx retransmission until ACK and BYE after
 * 64·T1 without one, CANCEL → 487, BYE either way. Outbound INVITEs are uac-legs.ts's, requests in a
 * dialog in-dialog.ts's, MESSAGE outside one out-of-dialog-messages.ts's, REFER and NOTIFY of a
 * transfer refer.ts's.
 */
import type { Logger } from 'pino';
import { newSid, SidPrefix } from '../ids.js';
import { type Dialog, nextRequest, type PersistedDialog, uasDialog } from './dialog.js';
import type { Flow } from './flow.js';
import { InDialogRequests } from './in-dialog.js';
import { contactFor, party, STRUCTURED } from './leg-parts.js';
import { awaitingAck, confirm, type Leg, LegTable } from './leg-table.js';
import { MergedRequests } from './merged-requests.js';
import { detached, headerText, newTag, type SipRequest } from './message.js';
import { type MessageHandler, OutOfDialogMessages } from './out-of-dialog-messages.js';
import type { InboundInvite, MessageBody, OutboundMessage, PlaceCall, SipEvent, SipPort } from './port.js';
import { SipRefers } from './refer.js';
import type { SipStack } from './stack.js';
import { retransmitInterval, SipTimers } from './timers.js';
import { UacLegs } from './uac-legs.js';

/** Handles a new inbound leg; a throw or a rejection ends the leg with 500 (never the process). */
export type InviteHandler = (invite: InboundInvite) => void | Promise<void>;

export type InboundRequestFilter = (
  rq: SipRequest,
  flow: Flow,
) => Promise<InboundInvite['client'] | false | undefined>;

export class SipLegs implements SipPort {
  private readonly table: LegTable;
  private readonly uac: UacLegs;
  private readonly inDialog: InDialogRequests;
  private readonly merged: MergedRequests;
  private readonly messages: OutOfDialogMessages;
  private inviteHandler: InviteHandler | null = null;
  /** New INVITEs whose body is of a media type that is not a voice call (USSD), by that type. */
  private readonly inviteHandlersByType = new Map<string, InviteHandler>();

  /** REFERs in the legs' dialogs, both ways (refer.ts). */
  readonly refers: SipRefers;

  constructor(
    private readonly stack: SipStack,
    private readonly log: Logger,
  ) {
    this.table = new LegTable(stack, log, (legId) => this.refers.legEnded(legId));
    this.uac = new UacLegs(stack, this.table);
    this.inDialog = new InDialogRequests(stack, this.table, () => this.refers);
    this.merged = new MergedRequests(stack);
    this.messages = new OutOfDialogMessages(stack, this.table, log);
    this.refers = new SipRefers(
      stack,
      {
        emit: (legId, event) => {
          const leg = this.table.get(legId);
          if (leg && !leg.terminal) this.table.emit(leg, event);
        },
        sendInDialog: (legId, method, options, onResponse) =>
          this.inDialog.send(legId, method, options, onResponse),
      },
      log,
    );
  }

  /** Subscribes to leg events; returns an unsubscribe function. */
  onEvent(listener: (e: SipEvent) => void): () => void {
    return this.table.subscribe(listener);
  }

  /** The one handler for new inbound legs (the call layer). Without one, INVITEs get 480. */
  onInvite(handler: InviteHandler): void {
    this.inviteHandler = handler;
  }

  /**
   * The handler for new INVITEs whose body has Content-Type `contentType` (lower case, without
   * parameters): a session that is not a voice call (USSD, 3GPP TS 24.390) goes to its own runtime.
   */
  onInviteWithBody(contentType: string, handler: InviteHandler): void {
    this.inviteHandlersByType.set(contentType.toLowerCase(), handler);
  }

  /** Handler for MESSAGE outside a dialog; returns the status to answer. Without one: 404. */
  onMessage(handler: MessageHandler): void {
    this.messages.onMessage(handler);
  }

  get size(): number {
    return this.table.size;
  }

  /** Legs that have not ended yet (ended legs linger a while to absorb retransmissions). */
  get active(): number {
    return this.table.active;
  }

  checkTarget(requestUri: string, route: readonly string[] = []): Promise<string | null> {
    return this.stack.checkDestination(requestUri, route);
  }

  dialogOf(legId: string): Dialog | null {
    return this.table.get(legId)?.dialog ?? null;
  }

  placeCall(legId: string, call: PlaceCall): void {
    this.uac.placeCall(legId, call);
  }

  cancel(legId: string): void {
    const leg = this.table.get(legId);
    if (!leg || leg.terminal) return;
    if (leg.role !== 'uac' || leg.state === 'confirmed') {
      this.hangUp(legId);
      return;
    }
    this.uac.abandon(leg);
    this.table.emit(leg, { type: 'sip.ended', legId, cause: 'canceled' });
  }

  // ---- UAS ------------------------------------------------------------------------------------

  /** See MergedRequests.admit: false (after 482) for a second copy of a request in progress. */
  admitNew(rq: SipRequest): boolean {
    return this.merged.admit(rq);
  }

  /** See MergedRequests.release. */
  releaseNew(rq: SipRequest): void {
    this.merged.release(rq);
  }

  /** A dialog-creating INVITE from the dispatcher (no To-tag). */
  acceptInvite(rq: SipRequest, flow: Flow, client?: InboundInvite['client']): void {
    const legId = newSid(SidPrefix.Call);
    const leg: Leg = {
      id: legId,
      role: 'uas',
      state: 'calling',
      dialog: null,
      terminal: false,
      abandoned: false,
      localTag: newTag(),
      // Copied out of the INVITE's text (a slice of it): the leg outlives the INVITE by Timer B.
      callId: detached(rq.headers['call-id']),
      localSdp: null,
      flow: flow.protocol === 'UDP' ? null : flow,
      timers: new Set(),
      invite: rq,
    };
    this.table.add(leg);
    const branch = rq.headers.via[0]?.params.branch;
    if (branch) this.table.indexInvite(leg, String(branch));
    // §17.2.1: no 100 when the first response follows within 200 ms, as a routed call's 180 does:
    // one datagram (and wake-up of the peer) less per call.
    leg.trying = this.table.timer(leg, SipTimers.TRYING, () => {
      leg.trying = undefined;
      if (leg.invite && leg.state === 'calling' && !leg.terminal) this.stack.respond(rq, 100);
    });
    const bodyType = (headerText(rq, 'content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    const handler = this.inviteHandlersByType.get(bodyType) ?? this.inviteHandler;
    if (!handler) {
      this.reject(legId, 480);
      return;
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(rq.headers))
      if (!STRUCTURED.has(k) && typeof v === 'string') headers[k] = v;
    const invite: InboundInvite = {
      legId,
      requestUri: rq.uri,
      from: party(rq.headers.from),
      to: party(rq.headers.to),
      callId: leg.callId,
      headers,
      sdp: rq.content || null,
      source: flow,
      ...(client ? { client } : {}),
    };
    const failed = (err: unknown) => {
      this.log.error({ err, legId }, 'invite handler failed');
      try {
        this.reject(legId, 500);
      } catch (e) {
        this.log.error({ err: e, legId }, 'sip 500 not sent');
      }
    };
    try {
      const pending = handler(invite);
      if (pending) pending.catch(failed);
    } catch (err) {
      failed(err);
    }
  }

  sendProvisional(legId: string, status: 180 | 183, sdp?: string): void {
    const leg = this.table.get(legId);
    if (!leg?.invite || leg.terminal || leg.state === 'answered' || leg.state === 'confirmed') return;
    leg.state = 'early';
    this.table.responding(leg);
    const contact = contactFor(this.stack, legId, leg.flow);
    this.stack.respond(leg.invite, status, {
      toTag: leg.localTag,
      headers: {
        contact: [{ uri: contact, params: {} }],
        ...(sdp ? { 'content-type': 'application/sdp' } : {}),
      },
      ...(sdp ? { content: sdp } : {}),
    });
  }

  answer(legId: string, sdp: string): void {
    const leg = this.table.get(legId);
    if (!leg?.invite || leg.terminal || leg.state === 'answered' || leg.state === 'confirmed') return;
    const contact = contactFor(this.stack, legId, leg.flow);
    leg.localSdp = sdp || null;
    this.table.responding(leg);
    leg.ok = this.stack.respond(leg.invite, 200, {
      toTag: leg.localTag,
      headers: {
        contact: [{ uri: contact, params: {} }],
        ...(sdp ? { 'content-type': 'application/sdp' } : {}),
      },
      ...(sdp ? { content: sdp } : {}),
    });
    leg.dialog = uasDialog(leg.invite, leg.localTag, contact, leg.flow);
    leg.state = 'answered';
    this.awaitAck(leg, Date.now() + SipTimers.ACK_WAIT, 0);
  }

  /**
   * The 2xx retransmissions (T1 doubling up to T2, §13.3.1.4) and the wait for their ACK in one timer
   * at a time: the last step ends at the deadline and gives up. The ACK stops it (`confirm`), so an
   * acknowledged leg keeps no timer for the rest of the 64·T1.
   */
  private awaitAck(leg: Leg, deadline: number, n: number): void {
    const left = deadline - Date.now();
    const last = left <= retransmitInterval(n);
    leg.ackWait = this.table.timer(leg, last ? Math.max(0, left) : retransmitInterval(n), () => {
      leg.ackWait = undefined;
      if (!awaitingAck(leg) || !leg.ok) return;
      if (last) return this.ackTimeout(leg);
      this.stack.sendResponse(leg.ok);
      this.awaitAck(leg, deadline, n + 1);
    });
  }

  private ackTimeout(leg: Leg): void {
    const body = leg.byeAfterAck ? leg.byeBody : undefined;
    confirm(leg);
    this.log.warn({ legId: leg.id }, 'no ACK for 2xx within 64*T1: sending BYE');
    this.table.sendBye(leg, body);
    this.table.emit(leg, { type: 'sip.ended', legId: leg.id, cause: 'ack-timeout' });
  }

  reject(legId: string, status: number, reason?: string, retryAfter?: number): void {
    const leg = this.table.get(legId);
    if (!leg?.invite || leg.terminal || leg.state === 'answered' || leg.state === 'confirmed') return;
    const code = status >= 300 && status <= 699 ? status : 500;
    this.table.responding(leg);
    this.stack.respond(leg.invite, code, {
      toTag: leg.localTag,
      ...(reason ? { reason } : {}),
      ...(retryAfter !== undefined ? { headers: { 'retry-after': String(retryAfter) } } : {}),
    });
    this.table.emit(leg, { type: 'sip.ended', legId, cause: 'rejected' });
  }

  /** CANCEL for an inbound INVITE (§9.2): 200 to the CANCEL, 487 to the INVITE when unanswered. */
  onCancel(rq: SipRequest): void {
    const branch = rq.headers.via[0]?.params.branch;
    const leg = branch ? this.table.ofInvite(rq.headers['call-id'], String(branch)) : undefined;
    if (!leg) return void this.stack.respond(rq, 481);
    this.stack.respond(rq, 200, { toTag: leg.localTag });
    if (leg.invite && (leg.state === 'calling' || leg.state === 'early')) {
      this.table.responding(leg);
      this.stack.respond(leg.invite, 487, { toTag: leg.localTag });
      this.table.emit(leg, { type: 'sip.cancel', legId: leg.id });
    }
  }

  // ---- both -----------------------------------------------------------------------------------

  hangUp(legId: string, body?: MessageBody): void {
    const leg = this.table.get(legId);
    if (!leg || leg.terminal) return;
    if (leg.role === 'uac' && leg.state !== 'confirmed') {
      this.uac.abandon(leg);
    } else if (leg.role === 'uas' && (leg.state === 'calling' || leg.state === 'early') && leg.invite) {
      this.table.responding(leg);
      this.stack.respond(leg.invite, 480, { toTag: leg.localTag });
    } else if (leg.state === 'answered') {
      // §15: no BYE before the ACK arrives (or the wait for it ends).
      leg.byeAfterAck = true;
      leg.byeBody = body;
    } else {
      this.table.sendBye(leg, body);
    }
    this.table.emit(leg, { type: 'sip.ended', legId, cause: 'hangup' });
  }

  endDialog(dialog: PersistedDialog): void {
    // The dead node may have sent requests after the snapshot was written: jump the CSeq well ahead.
    const { request } = nextRequest({ ...dialog, localCseq: dialog.localCseq + 100, flow: null }, 'BYE');
    this.stack.send(request, () => {});
  }

  reInvite(legId: string, sdp: string): void {
    this.inDialog.reInvite(legId, sdp);
  }

  sendInfo(legId: string, contentType: string, body: string): void {
    this.inDialog.send(legId, 'INFO', { content: body, contentType });
  }

  answerRefer(legId: string, referId: string, status: number, reason?: string): void {
    this.refers.answerRefer(legId, referId, status, reason);
  }

  notifyRefer(legId: string, referId: string, status: number, terminated: boolean): void {
    this.refers.notifyRefer(legId, referId, status, terminated);
  }

  refer(legId: string, referTo: string): void {
    this.refers.refer(legId, referTo);
  }

  sendMessage(message: OutboundMessage): void {
    this.messages.send(message);
  }

  /** A request carrying a To-tag: in-dialog. ACKs included. */
  onInDialog(rq: SipRequest): void {
    this.inDialog.received(rq);
  }

  /** MESSAGE outside a dialog (RFC 3428). */
  onOutOfDialogMessage(rq: SipRequest, source: Flow, client?: InboundInvite['client']): Promise<void> {
    return this.messages.received(rq, source, client);
  }

  /** Ends every leg (shutdown): BYE or CANCEL or 503, idempotent. */
  closeAll(): void {
    for (const leg of this.table.all()) {
      if (!leg.terminal) {
        if (leg.role === 'uas' && leg.invite && (leg.state === 'calling' || leg.state === 'early')) {
          this.table.responding(leg);
          this.stack.respond(leg.invite, 503, { toTag: leg.localTag });
          this.table.emit(leg, { type: 'sip.ended', legId: leg.id, cause: 'transport' });
        } else this.hangUp(leg.id);
      }
      this.table.forget(leg);
    }
  }
}
