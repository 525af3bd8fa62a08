/**
 * Call legs: the SipPort implementation. Each leg is one dialog, UAC (placeCall) or UAS (an
 * inbound INVITE), held here by leg id with its live handles; its dialog is plain data the owner
 * may persist. Implements the UA core duties the `sip` package leaves out (RFC 3261 §12-§15):
 * To-tags, 100 Trying (when the first response is late), 2xx retransmission until ACK and BYE after 64·T1 without one, the ACK for
 * 2xx, CANCEL → 487, BYE either way, re-INVITE, INFO and MESSAGE, one digest retry on 401/407.
 * REFER and NOTIFY of a transfer are refer.ts's.
 */
import type { Logger } from 'pino';
import type { StackNameAddr } from 'sip';
import { newSid, SidPrefix } from '../ids.js';
import {
  acceptRemoteCseq,
  ackFor2xx,
  type Dialog,
  nextRequest,
  type PersistedDialog,
  uacDialog,
  uasDialog,
} from './dialog.js';
import { retryWithCredentials } from './digest.js';
import {
  headerText,
  newCallId,
  newTag,
  type SipRequest,
  type SipResponse,
  sipUriOf,
  tagOf,
  xHeadersOf,
} from './message.js';
import {
  type InboundInvite,
  type MessageBody,
  type OutboundMessage,
  type Party,
  type PlaceCall,
  type SipEvent,
  type SipPort,
  TERMINAL_SIP_EVENTS,
} from './port.js';
import { SipRefers } from './refer.js';
import { formatSipAddress } from './sip-uri.js';
import type { ClientRequest, SipStack } from './stack.js';
import { retransmitInterval, SipTimers } from './timers.js';
import type { Flow } from './transport.js';

type LegState = 'calling' | 'early' | 'answered' | 'confirmed' | 'ended';

interface Leg {
  readonly id: string;
  readonly role: 'uac' | 'uas';
  state: LegState;
  dialog: Dialog | null;
  /** A terminal event was emitted. */
  terminal: boolean;
  /** Ended by us before it was answered: a late 2xx gets ACK + BYE. */
  abandoned: boolean;
  readonly localTag: string;
  readonly callId: string;
  localSdp: string | null;
  readonly flow: Flow | null;
  readonly timers: Set<NodeJS.Timeout>;
  // UAS (`invite` and `ok` are dropped once the ACK arrives: a held call keeps only its dialog)
  /** `callId|branch` of the INVITE in `byInvite`. */
  inviteKey?: string;
  invite?: SipRequest;
  /** The 100 Trying still to send if no other response comes first (§17.2.1). */
  trying?: NodeJS.Timeout;
  ok?: SipResponse;
  byeAfterAck?: boolean;
  /** The body of that BYE (a USSD session's last message). */
  byeBody?: MessageBody | undefined;
  // UAC
  client?: ClientRequest;
  call?: PlaceCall;
  ack?: SipRequest;
  authTried?: boolean;
}

/** Generic headers of an INVITE that callers may read (lower-case names → text). */
const STRUCTURED = new Set([
  'via',
  'to',
  'from',
  'call-id',
  'cseq',
  'contact',
  'route',
  'record-route',
  'content-length',
]);

/** Handles a new inbound leg; a throw or a rejection ends the leg with 500 (never the process). */
export type InviteHandler = (invite: InboundInvite) => void | Promise<void>;
/** Out-of-dialog requests remembered for merge detection at most (about Timer B × the request rate). */
const MAX_RECENT_REQUESTS = 100_000;

export type InboundRequestFilter = (
  rq: SipRequest,
  flow: Flow,
) => Promise<InboundInvite['client'] | false | undefined>;

export class SipLegs implements SipPort {
  private readonly legs = new Map<string, Leg>();
  /** `callId|localTag` → leg id (in-dialog requests carry our tag in To). */
  private readonly byDialog = new Map<string, string>();
  /** `callId|branch` of inbound INVITEs → leg id (for CANCEL). */
  private readonly byInvite = new Map<string, string>();
  /**
   * `Call-ID|From tag|CSeq` of out-of-dialog INVITEs and MESSAGEs seen lately → their branch, to
   * spot merged requests (RFC 3261 §8.2.2.2). Kept for Timer B, capped so a flood cannot grow it.
   */
  private readonly recent = new Map<string, string>();
  private readonly listeners = new Set<(e: SipEvent) => void>();
  private inviteHandler: InviteHandler | null = null;
  /** New INVITEs whose body is of a media type that is not a voice call (USSD), by that type. */
  private readonly inviteHandlersByType = new Map<string, InviteHandler>();
  private messageHandler:
    | ((m: {
        from: Party;
        to: Party;
        requestUri: string;
        contentType: string;
        body: string;
        source: Flow;
        /** The client that sent it, when it authenticated (digest) as one of ours. */
        client?: InboundInvite['client'];
      }) => Promise<number>)
    | null = null;

  /** REFERs in the legs' dialogs, both ways (refer.ts). */
  readonly refers: SipRefers;

  constructor(
    private readonly stack: SipStack,
    private readonly log: Logger,
  ) {
    this.refers = new SipRefers(
      stack,
      {
        emit: (legId, event) => {
          const leg = this.legs.get(legId);
          if (leg && !leg.terminal) this.emit(leg, event);
        },
        sendInDialog: (legId, method, options, onResponse) =>
          this.sendInDialog(legId, method, options, onResponse),
      },
      log,
    );
  }

  /** Subscribes to leg events; returns an unsubscribe function. */
  onEvent(listener: (e: SipEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
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
  onMessage(handler: NonNullable<SipLegs['messageHandler']>): void {
    this.messageHandler = handler;
  }

  get size(): number {
    return this.legs.size;
  }

  /** Legs that have not ended yet (ended legs linger a while to absorb retransmissions). */
  get active(): number {
    let n = 0;
    for (const leg of this.legs.values()) if (!leg.terminal) n++;
    return n;
  }

  checkTarget(requestUri: string, route: readonly string[] = []): Promise<string | null> {
    return this.stack.checkDestination(requestUri, route);
  }

  private emit(leg: Leg, event: SipEvent): void {
    if (leg.terminal) return;
    if (TERMINAL_SIP_EVENTS.has(event.type)) {
      leg.terminal = true;
      this.retire(leg);
    }
    for (const l of this.listeners) {
      try {
        l(event);
      } catch (err) {
        this.log.error({ err, event: event.type }, 'sip event listener failed');
      }
    }
  }

  /** Keeps an ended leg long enough to absorb retransmissions and late answers, then forgets it. */
  private retire(leg: Leg): void {
    leg.state = 'ended';
    this.refers.legEnded(leg.id);
    const t = setTimeout(() => this.forget(leg), SipTimers.TIMER_B);
    t.unref();
    leg.timers.add(t);
  }

  private forget(leg: Leg): void {
    for (const t of leg.timers) clearTimeout(t);
    leg.timers.clear();
    this.legs.delete(leg.id);
    this.byDialog.delete(`${leg.callId}|${leg.localTag}`);
    if (leg.inviteKey) this.byInvite.delete(leg.inviteKey);
  }

  /** The INVITE gets its first response now: no 100 Trying after it. */
  private responding(leg: Leg): void {
    if (!leg.trying) return;
    clearTimeout(leg.trying);
    leg.timers.delete(leg.trying);
    leg.trying = undefined;
  }

  private timer(leg: Leg, ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      leg.timers.delete(t);
      try {
        fn();
      } catch (err) {
        this.log.error({ err, legId: leg.id }, 'sip leg timer failed');
      }
    }, ms);
    leg.timers.add(t);
  }

  private contactFor(legId: string, flow: Flow | null, requestUri?: string): string {
    const byUri = requestUri === undefined ? undefined : sipUriOf(requestUri)?.params.transport;
    // A flow another node holds is reached through that node, which relays back to us over UDP.
    const relayed = flow !== null && !this.stack.holdsFlow(flow);
    const transport = relayed ? 'UDP' : (flow?.protocol ?? (byUri?.toLowerCase() === 'tcp' ? 'TCP' : 'UDP'));
    return formatSipAddress(legId, this.stack.host, {
      port: this.stack.transports.portFor(transport),
      params: transport === 'UDP' ? {} : { transport: transport.toLowerCase() },
    });
  }

  dialogOf(legId: string): Dialog | null {
    return this.legs.get(legId)?.dialog ?? null;
  }

  // ---- UAC ------------------------------------------------------------------------------------

  placeCall(legId: string, call: PlaceCall): void {
    const leg: Leg = {
      id: legId,
      role: 'uac',
      state: 'calling',
      dialog: null,
      terminal: false,
      abandoned: false,
      localTag: newTag(),
      callId: newCallId(this.stack.host),
      localSdp: call.sdp ?? null,
      flow: call.flow ?? null,
      timers: new Set(),
      call,
    };
    this.legs.set(legId, leg);
    this.byDialog.set(`${leg.callId}|${leg.localTag}`, legId);
    const contact = this.contactFor(legId, leg.flow, call.requestUri);
    const rq: SipRequest = {
      method: 'INVITE',
      uri: call.requestUri,
      version: '2.0',
      headers: {
        via: [],
        to: nameAddr(call.to, {}),
        from: nameAddr(call.from, { tag: leg.localTag }),
        'call-id': leg.callId,
        cseq: { seq: 1, method: 'INVITE' },
        'max-forwards': 70,
        contact: [{ uri: contact, params: {} }],
        ...(call.route?.length ? { route: call.route.map((uri) => ({ uri, params: {} })) } : {}),
        ...lowerKeys(call.headers),
        ...(call.sdp !== undefined ? { 'content-type': call.contentType ?? 'application/sdp' } : {}),
      },
      ...(call.sdp !== undefined ? { content: call.sdp } : {}),
    };
    this.sendInvite(leg, rq, contact);
  }

  private sendInvite(leg: Leg, rq: SipRequest, contact: string): void {
    leg.client = this.stack.send(
      rq,
      (rs) => this.onInviteResponse(leg, rs, contact),
      leg.flow ? { flow: leg.flow } : { tenantTarget: true },
    );
  }

  private onInviteResponse(leg: Leg, rs: SipResponse, contact: string): void {
    if (leg.ack && rs.status >= 200 && rs.status < 300) {
      // A retransmitted 2xx: the ACK got lost (§13.2.2.4).
      this.stack.sendStateless(leg.ack, leg.flow ? { flow: leg.flow } : {});
      return;
    }
    const sent = leg.client?.sent;
    if (!sent) return;
    if (rs.status >= 200 && rs.status < 300) {
      const dialog = uacDialog(sent, rs, contact, leg.flow) ?? fallbackDialog(sent, rs, contact, leg.flow);
      leg.dialog = dialog;
      leg.ack = ackFor2xx(dialog, sent.headers.cseq.seq);
      this.stack.sendStateless(leg.ack, leg.flow ? { flow: leg.flow } : {});
      if (leg.abandoned || leg.terminal) {
        this.sendBye(leg);
        return;
      }
      leg.state = 'confirmed';
      // The dialog and the ACK are all a confirmed leg needs: let the INVITE and its options go.
      leg.client = undefined;
      leg.call = undefined;
      this.emit(leg, {
        type: 'sip.answered',
        legId: leg.id,
        sdp: rs.content || null,
        dialog,
        xHeaders: xHeadersOf(rs),
      });
      return;
    }
    if (leg.abandoned || leg.terminal) return;
    if (rs.status < 200) {
      if (rs.status === 100) return;
      leg.state = 'early';
      this.emit(leg, { type: 'sip.ringing', legId: leg.id, status: rs.status, sdp: rs.content || null });
      return;
    }
    const retry = leg.authTried ? null : retryWithCredentials(sent, rs, leg.call?.credentials);
    if (retry) {
      leg.authTried = true;
      this.sendInvite(leg, retry, contact);
      return;
    }
    this.emit(leg, {
      type: 'sip.failed',
      legId: leg.id,
      status: rs.status,
      reason: rs.reason || '',
      callId: leg.callId,
      xHeaders: xHeadersOf(rs),
    });
  }

  cancel(legId: string): void {
    const leg = this.legs.get(legId);
    if (!leg || leg.terminal) return;
    if (leg.role !== 'uac' || leg.state === 'confirmed') {
      this.hangUp(legId);
      return;
    }
    leg.abandoned = true;
    leg.client?.cancel();
    this.emit(leg, { type: 'sip.ended', legId, cause: 'canceled' });
  }

  // ---- UAS ------------------------------------------------------------------------------------

  /**
   * False, after answering 482 Loop Detected, when `rq` (no To-tag) has the From tag, Call-ID and
   * CSeq of a request already in progress but another branch: the same request reached us twice
   * by different paths (RFC 3261 §8.2.2.2), and only the first may create a call or a message.
   */
  admitNew(rq: SipRequest): boolean {
    const key = mergeKey(rq);
    const branch = String(rq.headers.via[0]?.params.branch ?? '');
    const known = this.recent.get(key);
    if (known !== undefined) {
      if (known === branch) return true;
      this.stack.respond(rq, 482);
      return false;
    }
    if (this.recent.size < MAX_RECENT_REQUESTS) {
      this.recent.set(key, branch);
      setTimeout(() => {
        if (this.recent.get(key) === branch) this.recent.delete(key);
      }, SipTimers.TIMER_B).unref();
    }
    return true;
  }

  /**
   * Forgets an admitted request that was answered without effect (challenged with 401/407): some
   * clients resend it with credentials under the same CSeq, which is not a merge.
   */
  releaseNew(rq: SipRequest): void {
    const key = mergeKey(rq);
    if (this.recent.get(key) === String(rq.headers.via[0]?.params.branch ?? '')) this.recent.delete(key);
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
      callId: rq.headers['call-id'],
      localSdp: null,
      flow: flow.protocol === 'UDP' ? null : flow,
      timers: new Set(),
      invite: rq,
    };
    this.legs.set(legId, leg);
    this.byDialog.set(`${leg.callId}|${leg.localTag}`, legId);
    const branch = rq.headers.via[0]?.params.branch;
    if (branch) {
      leg.inviteKey = `${leg.callId}|${branch}`;
      this.byInvite.set(leg.inviteKey, legId);
    }
    // §17.2.1: no 100 when the first response follows within 200 ms, as a routed call's 180 does:
    // one datagram (and wake-up of the peer) less per call.
    const trying = setTimeout(() => {
      leg.timers.delete(trying);
      leg.trying = undefined;
      if (leg.invite && leg.state === 'calling' && !leg.terminal) this.stack.respond(rq, 100);
    }, SipTimers.TRYING);
    leg.trying = trying;
    leg.timers.add(trying);
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
    const leg = this.legs.get(legId);
    if (!leg?.invite || leg.terminal || leg.state === 'answered' || leg.state === 'confirmed') return;
    leg.state = 'early';
    this.responding(leg);
    const contact = this.contactFor(legId, leg.flow);
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
    const leg = this.legs.get(legId);
    if (!leg?.invite || leg.terminal || leg.state === 'answered' || leg.state === 'confirmed') return;
    const contact = this.contactFor(legId, leg.flow);
    leg.localSdp = sdp || null;
    this.responding(leg);
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
    const deadline = Date.now() + SipTimers.ACK_WAIT;
    const retransmit = (n: number) => {
      this.timer(leg, retransmitInterval(n), () => {
        if (leg.state !== 'answered' || !leg.ok) return;
        if (Date.now() >= deadline) {
          this.ackTimeout(leg);
          return;
        }
        this.stack.sendResponse(leg.ok);
        retransmit(n + 1);
      });
    };
    retransmit(0);
    this.timer(leg, SipTimers.ACK_WAIT, () => {
      if (leg.state === 'answered') this.ackTimeout(leg);
    });
  }

  /** The 2xx was acknowledged (or given up on): only the dialog is needed from now on. */
  private confirm(leg: Leg): void {
    leg.state = 'confirmed';
    leg.invite = undefined;
    leg.ok = undefined;
  }

  private ackTimeout(leg: Leg): void {
    this.confirm(leg);
    this.log.warn({ legId: leg.id }, 'no ACK for 2xx within 64*T1: sending BYE');
    this.sendBye(leg);
    this.emit(leg, { type: 'sip.ended', legId: leg.id, cause: 'ack-timeout' });
  }

  reject(legId: string, status: number, reason?: string, retryAfter?: number): void {
    const leg = this.legs.get(legId);
    if (!leg?.invite || leg.terminal || leg.state === 'answered' || leg.state === 'confirmed') return;
    const code = status >= 300 && status <= 699 ? status : 500;
    this.responding(leg);
    this.stack.respond(leg.invite, code, {
      toTag: leg.localTag,
      ...(reason ? { reason } : {}),
      ...(retryAfter !== undefined ? { headers: { 'retry-after': String(retryAfter) } } : {}),
    });
    this.emit(leg, { type: 'sip.ended', legId, cause: 'rejected' });
  }

  // ---- both -----------------------------------------------------------------------------------

  hangUp(legId: string, body?: MessageBody): void {
    const leg = this.legs.get(legId);
    if (!leg || leg.terminal) return;
    if (leg.role === 'uac' && leg.state !== 'confirmed') {
      leg.abandoned = true;
      leg.client?.cancel();
    } else if (leg.role === 'uas' && (leg.state === 'calling' || leg.state === 'early') && leg.invite) {
      this.responding(leg);
      this.stack.respond(leg.invite, 480, { toTag: leg.localTag });
    } else if (leg.state === 'answered') {
      // §15: no BYE before the ACK arrives (or the wait for it ends).
      leg.byeAfterAck = true;
      leg.byeBody = body;
    } else {
      this.sendBye(leg, body);
    }
    this.emit(leg, { type: 'sip.ended', legId, cause: 'hangup' });
  }

  private sendBye(leg: Leg, body?: MessageBody): void {
    if (!leg.dialog) return;
    const { dialog, request } = nextRequest(leg.dialog, 'BYE', body);
    leg.dialog = dialog;
    this.stack.send(request, () => {}, dialog.flow ? { flow: dialog.flow } : {});
  }

  endDialog(dialog: PersistedDialog): void {
    // The dead node may have sent requests after the snapshot was written: jump the CSeq well ahead.
    const { request } = nextRequest({ ...dialog, localCseq: dialog.localCseq + 100, flow: null }, 'BYE');
    this.stack.send(request, () => {});
  }

  reInvite(legId: string, sdp: string): void {
    const leg = this.legs.get(legId);
    if (!leg?.dialog || leg.terminal || leg.state !== 'confirmed') {
      const status = leg ? 491 : 481;
      this.emitTo(legId, { type: 'sip.reinviteResult', legId, status, sdp: null });
      return;
    }
    const { dialog, request } = nextRequest(leg.dialog, 'INVITE', { content: sdp });
    leg.dialog = dialog;
    leg.localSdp = sdp;
    let acked = false;
    this.stack.send(
      request,
      (rs) => {
        if (rs.status < 200) return;
        if (rs.status < 300) {
          this.stack.sendStateless(
            ackFor2xx(dialog, request.headers.cseq.seq),
            dialog.flow ? { flow: dialog.flow } : {},
          );
          if (acked) return;
          acked = true;
        }
        this.emitTo(legId, { type: 'sip.reinviteResult', legId, status: rs.status, sdp: rs.content || null });
      },
      dialog.flow ? { flow: dialog.flow } : {},
    );
  }

  sendInfo(legId: string, contentType: string, body: string): void {
    this.sendInDialog(legId, 'INFO', { content: body, contentType });
  }

  /** A request in the leg's dialog (INFO, NOTIFY, REFER); its CSeq number, or null without a dialog. */
  private sendInDialog(
    legId: string,
    method: string,
    options: { headers?: Record<string, unknown>; content?: string; contentType?: string },
    onResponse: (rs: SipResponse) => void = () => {},
  ): number | null {
    const leg = this.legs.get(legId);
    if (!leg?.dialog || leg.terminal) return null;
    // REFER is a target refresh and NOTIFY must name its sender (RFC 3515 §2.4.1, RFC 6665 §4.1.2.2).
    const contact =
      method === 'REFER' || method === 'NOTIFY'
        ? { contact: [{ uri: leg.dialog.localContact, params: {} }] }
        : {};
    const { dialog, request } = nextRequest(leg.dialog, method, {
      ...options,
      headers: { ...contact, ...(options.headers ?? {}) },
    });
    leg.dialog = dialog;
    this.stack.send(request, onResponse, dialog.flow ? { flow: dialog.flow } : {});
    return request.headers.cseq.seq;
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
    const send = (rq: SipRequest, retried: boolean) => {
      this.stack.send(
        rq,
        (rs) => {
          if (rs.status < 200) return;
          const retry = retried ? null : retryWithCredentials(rq, rs, message.credentials);
          if (retry) return send(retry, true);
          for (const l of this.listeners)
            l({
              type: 'sip.messageResult',
              requestId: message.requestId,
              status: rs.status,
              reason: rs.reason || '',
            });
        },
        message.flow ? { flow: message.flow } : { tenantTarget: true },
      );
    };
    send(
      {
        method: 'MESSAGE',
        uri: message.requestUri,
        version: '2.0',
        headers: {
          via: [],
          to: nameAddr(message.to, {}),
          from: nameAddr(message.from, { tag: newTag() }),
          'call-id': newCallId(this.stack.host),
          cseq: { seq: 1, method: 'MESSAGE' },
          'max-forwards': 70,
          ...(message.route?.length ? { route: message.route.map((uri) => ({ uri, params: {} })) } : {}),
          ...lowerKeys(message.headers),
          'content-type': message.contentType ?? 'text/plain',
        },
        content: message.body,
      },
      false,
    );
  }

  private emitTo(legId: string, event: SipEvent): void {
    const leg = this.legs.get(legId);
    if (leg) this.emit(leg, event);
    else for (const l of this.listeners) l(event);
  }

  // ---- requests from the network ----------------------------------------------------------------

  /** CANCEL for an inbound INVITE (§9.2): 200 to the CANCEL, 487 to the INVITE when unanswered. */
  onCancel(rq: SipRequest): void {
    const branch = rq.headers.via[0]?.params.branch;
    const legId = branch ? this.byInvite.get(`${rq.headers['call-id']}|${branch}`) : undefined;
    const leg = legId ? this.legs.get(legId) : undefined;
    if (!leg) return void this.stack.respond(rq, 481);
    this.stack.respond(rq, 200, { toTag: leg.localTag });
    if (leg.invite && (leg.state === 'calling' || leg.state === 'early')) {
      this.responding(leg);
      this.stack.respond(leg.invite, 487, { toTag: leg.localTag });
      this.emit(leg, { type: 'sip.cancel', legId: leg.id });
    }
  }

  /** A request carrying a To-tag: in-dialog. ACKs included. */
  onInDialog(rq: SipRequest): void {
    const legId = this.byDialog.get(`${rq.headers['call-id']}|${tagOf(rq.headers.to)}`);
    const leg = legId ? this.legs.get(legId) : undefined;
    // No call to transfer (Restcomm answers 404 too, with why).
    if (rq.method === 'REFER' && (!leg?.dialog || leg.state === 'ended'))
      return void this.refers.refuse(rq, 404, 'SIP REFER should be sent in dialog');
    if (rq.method === 'ACK') {
      if (leg?.state === 'answered') {
        this.confirm(leg);
        if (leg.dialog) this.emit(leg, { type: 'sip.confirmed', legId: leg.id, dialog: leg.dialog });
        if (leg.byeAfterAck) this.sendBye(leg, leg.byeBody);
      }
      return;
    }
    if (!leg?.dialog || leg.state === 'ended') return void this.stack.respond(rq, 481);
    const dialog = acceptRemoteCseq(leg.dialog, rq);
    if (!dialog) return void this.stack.respond(rq, 500, { reason: 'CSeq Out Of Order' });
    leg.dialog = dialog;
    switch (rq.method) {
      case 'BYE':
        this.stack.respond(rq, 200);
        this.emit(leg, { type: 'sip.bye', legId: leg.id });
        return;
      case 'INVITE':
        this.stack.respond(rq, 200, {
          headers: {
            contact: [{ uri: dialog.localContact, params: {} }],
            ...(leg.localSdp ? { 'content-type': 'application/sdp' } : {}),
          },
          ...(leg.localSdp ? { content: leg.localSdp } : {}),
        });
        this.emit(leg, { type: 'sip.reinvite', legId: leg.id, sdp: rq.content || null });
        return;
      case 'INFO':
      case 'MESSAGE':
        this.stack.respond(rq, 200);
        this.emit(leg, {
          type: rq.method === 'INFO' ? 'sip.info' : 'sip.message',
          legId: leg.id,
          contentType: headerText(rq, 'content-type') ?? '',
          body: rq.content ?? '',
        });
        return;
      case 'OPTIONS':
        this.stack.respond(rq, 200);
        return;
      case 'REFER':
        this.refers.received(leg.id, rq);
        return;
      case 'NOTIFY':
        this.refers.notifyReceived(leg.id, rq);
        return;
      default:
        this.stack.respond(rq, 501);
    }
  }

  /** MESSAGE outside a dialog (RFC 3428). */
  async onOutOfDialogMessage(rq: SipRequest, source: Flow, client?: InboundInvite['client']): Promise<void> {
    if (!this.messageHandler) return void this.stack.respond(rq, 404);
    try {
      const status = await this.messageHandler({
        from: party(rq.headers.from),
        to: party(rq.headers.to),
        requestUri: rq.uri,
        contentType: headerText(rq, 'content-type') ?? 'text/plain',
        body: rq.content ?? '',
        source,
        ...(client ? { client } : {}),
      });
      this.stack.respond(rq, status);
    } catch (err) {
      this.log.error({ err }, 'MESSAGE handler failed');
      this.stack.respond(rq, 500);
    }
  }

  /** Ends every leg (shutdown): BYE or CANCEL or 503, idempotent. */
  closeAll(): void {
    for (const leg of [...this.legs.values()]) {
      if (!leg.terminal) {
        if (leg.role === 'uas' && leg.invite && (leg.state === 'calling' || leg.state === 'early')) {
          this.responding(leg);
          this.stack.respond(leg.invite, 503, { toTag: leg.localTag });
          this.emit(leg, { type: 'sip.ended', legId: leg.id, cause: 'transport' });
        } else this.hangUp(leg.id);
      }
      this.forget(leg);
    }
  }
}

function mergeKey(rq: SipRequest): string {
  return `${rq.headers['call-id']}|${tagOf(rq.headers.from) ?? ''}|${rq.headers.cseq.seq} ${rq.method}`;
}

function nameAddr(p: Party, params: Record<string, string>): StackNameAddr {
  return p.displayName
    ? { name: `"${p.displayName.replace(/(["\\])/g, '\\$1')}"`, uri: p.uri, params }
    : { uri: p.uri, params };
}

function party(na: StackNameAddr): Party {
  const name = na.name?.replace(/^"|"$/g, '');
  return name ? { uri: na.uri, displayName: name } : { uri: na.uri };
}

function lowerKeys(h: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h ?? {})) out[k.toLowerCase()] = v;
  return out;
}

/** A dialog for a 2xx that lacks a Contact: in-dialog requests go to the Request-URI. */
function fallbackDialog(sent: SipRequest, rs: SipResponse, contact: string, flow: Flow | null): Dialog {
  return {
    role: 'uac',
    callId: sent.headers['call-id'],
    localTag: tagOf(sent.headers.from) ?? '',
    remoteTag: tagOf(rs.headers.to) ?? '',
    local: { uri: sent.headers.from.uri },
    remote: { uri: rs.headers.to.uri },
    localCseq: sent.headers.cseq.seq,
    remoteCseq: null,
    routeSet: [],
    remoteTarget: sent.uri,
    localContact: contact,
    flow,
  };
}
