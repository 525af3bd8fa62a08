/**
 * Requests inside a leg's dialog, both ways (RFC 3261 §12.2, §14, §15): re-INVITE, INFO and the
 * REFER/NOTIFY that refer.ts composes, sent with the dialog's next CSeq; and from the network, ACK,
 * BYE, re-INVITE (answered with our current SDP), INFO, MESSAGE, OPTIONS, REFER and NOTIFY, checked
 * against the dialog's remote CSeq. Unknown dialogs get 481.
 */
import { acceptRemoteCseq, ackFor2xx, nextRequest } from './dialog.js';
import { awaitingAck, confirm, type LegTable } from './leg-table.js';
import { headerText, type SipRequest, type SipResponse, tagOf } from './message.js';
import type { SipRefers } from './refer.js';
import type { SipStack } from './stack.js';

export class InDialogRequests {
  constructor(
    private readonly stack: SipStack,
    private readonly table: LegTable,
    private readonly refers: () => SipRefers,
  ) {}

  reInvite(legId: string, sdp: string): void {
    const leg = this.table.get(legId);
    if (!leg?.dialog || leg.terminal || leg.state !== 'confirmed') {
      const status = leg ? 491 : 481;
      this.table.emitTo(legId, { type: 'sip.reinviteResult', legId, status, sdp: null });
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
        this.table.emitTo(legId, {
          type: 'sip.reinviteResult',
          legId,
          status: rs.status,
          sdp: rs.content || null,
        });
      },
      dialog.flow ? { flow: dialog.flow } : {},
    );
  }

  /** A request in the leg's dialog (INFO, NOTIFY, REFER); its CSeq number, or null without a dialog. */
  send(
    legId: string,
    method: string,
    options: { headers?: Record<string, unknown>; content?: string; contentType?: string },
    onResponse: (rs: SipResponse) => void = () => {},
  ): number | null {
    const leg = this.table.get(legId);
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

  /** A request carrying a To-tag: in-dialog. ACKs included. */
  received(rq: SipRequest): void {
    const leg = this.table.inDialog(rq.headers['call-id'], tagOf(rq.headers.to));
    // No call to transfer (Restcomm answers 404 too, with why).
    if (rq.method === 'REFER' && (!leg?.dialog || leg.state === 'ended'))
      return void this.refers().refuse(rq, 404, 'SIP REFER should be sent in dialog');
    if (rq.method === 'ACK') {
      // A leg hung up before its ACK came is ended already, and still owes the BYE.
      if (leg && awaitingAck(leg)) {
        if (leg.invite) this.stack.inviteAcknowledged(leg.invite);
        confirm(leg);
        if (leg.dialog) this.table.emit(leg, { type: 'sip.confirmed', legId: leg.id, dialog: leg.dialog });
        if (leg.byeAfterAck) this.table.sendBye(leg, leg.byeBody);
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
        this.table.emit(leg, { type: 'sip.bye', legId: leg.id });
        return;
      case 'INVITE':
        this.stack.respond(rq, 200, {
          headers: {
            contact: [{ uri: dialog.localContact, params: {} }],
            ...(leg.localSdp ? { 'content-type': 'application/sdp' } : {}),
          },
          ...(leg.localSdp ? { content: leg.localSdp } : {}),
        });
        this.table.emit(leg, { type: 'sip.reinvite', legId: leg.id, sdp: rq.content || null });
        return;
      case 'INFO':
      case 'MESSAGE':
        this.stack.respond(rq, 200);
        this.table.emit(leg, {
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
        this.refers().received(leg.id, rq);
        return;
      case 'NOTIFY':
        this.refers().notifyReceived(leg.id, rq);
        return;
      default:
        this.stack.respond(rq, 501);
    }
  }
}
