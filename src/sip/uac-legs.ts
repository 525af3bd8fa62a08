/**
 * Outbound legs (UAC, RFC 3261 §13.2): the INVITE, its provisional and final responses, the ACK for
 * a 2xx (again for each retransmitted 2xx), one digest retry on 401/407, and BYE for a 2xx that
 * arrives after we gave the call up.
 */
import { ackFor2xx, uacDialog } from './dialog.js';
import { retryWithCredentials } from './digest.js';
import { contactFor, fallbackDialog, lowerKeys, nameAddr } from './leg-parts.js';
import type { Leg, LegTable } from './leg-table.js';
import { newCallId, newTag, type SipRequest, type SipResponse, xHeadersOf } from './message.js';
import type { PlaceCall } from './port.js';
import type { SipStack } from './stack.js';

export class UacLegs {
  constructor(
    private readonly stack: SipStack,
    private readonly table: LegTable,
  ) {}

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
    this.table.add(leg);
    const contact = contactFor(this.stack, legId, leg.flow, call.requestUri);
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

  /** Gives up an unanswered outbound leg: CANCEL, and a late 2xx gets ACK + BYE. */
  abandon(leg: Leg): void {
    leg.abandoned = true;
    leg.client?.cancel();
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
        this.table.sendBye(leg);
        return;
      }
      leg.state = 'confirmed';
      // The dialog and the ACK are all a confirmed leg needs: let the INVITE and its options go.
      leg.client = undefined;
      leg.call = undefined;
      this.table.emit(leg, {
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
      this.table.emit(leg, {
        type: 'sip.ringing',
        legId: leg.id,
        status: rs.status,
        sdp: rs.content || null,
      });
      return;
    }
    const retry = leg.authTried ? null : retryWithCredentials(sent, rs, leg.call?.credentials);
    if (retry) {
      leg.authTried = true;
      this.sendInvite(leg, retry, contact);
      return;
    }
    this.table.emit(leg, {
      type: 'sip.failed',
      legId: leg.id,
      status: rs.status,
      reason: rs.reason || '',
      callId: leg.callId,
      xHeaders: xHeadersOf(rs),
    });
  }
}
