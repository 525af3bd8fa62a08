/**
 * REFER and its implicit subscription (RFC 3515), both ways, for the legs of `legs.ts`:
 *
 * - Received in a leg's dialog: held here until the call layer answers it (`sip.refer` →
 *   `answerRefer`); 202 carries `Event: refer`, refusals add a Reason header (RFC 3326). Accepted,
 *   the transfer's progress goes back as NOTIFYs with a message/sipfrag body (`notifyRefer`).
 *   Outside a dialog (or in one we do not hold) there is nothing to transfer: 404, as Restcomm.
 * - Sent by us (`refer`): the final response comes back as `sip.referResult`, each NOTIFY of the
 *   far end's subscription as `sip.referNotify` (answered 200; an Event other than refer gets 489).
 *
 * The subscription's id is the REFER's CSeq number (`Event: refer;id=N`, RFC 3515 §2.4.6), which
 * stays unambiguous when one dialog carries several REFERs.
 */
import type { Logger } from 'pino';
import { headerText, ReasonPhrase, type SipRequest, type SipResponse, sipUriOf } from './message.js';
import { REFER_SUBSCRIPTION_SECONDS, type SipEvent } from './port.js';
import type { SipStack } from './stack.js';
import { SipTimers } from './timers.js';

/** What the REFER handling needs of the legs. */
export interface ReferLegs {
  /** Emits an event of the leg (dropped once the leg has ended). */
  emit(legId: string, event: SipEvent): void;
  /**
   * Sends a request in the leg's confirmed dialog; returns its CSeq number, or null when the leg has
   * no dialog (anymore).
   */
  sendInDialog(
    legId: string,
    method: string,
    options: { headers?: Record<string, unknown>; content?: string; contentType?: string },
    onResponse?: (rs: SipResponse) => void,
  ): number | null;
}

interface PendingRefer {
  readonly rq: SipRequest;
  readonly timer: NodeJS.Timeout;
}

const userOfUri = (uri: string | undefined): string | null => (uri ? (sipUriOf(uri)?.user ?? null) : null);

/** The status code of a message/sipfrag body's first line (`SIP/2.0 200 OK`), or null. */
export function sipfragStatus(body: string | undefined): number | null {
  const m = /^\s*SIP\/2\.0\s+(\d{3})\b/.exec(body ?? '');
  return m ? Number(m[1]) : null;
}

/** The message/sipfrag body for a status (RFC 3420: one status line). */
export function sipfragOf(status: number): string {
  return `SIP/2.0 ${status} ${ReasonPhrase[status] ?? ''}`.trimEnd() + '\r\n';
}

export class SipRefers {
  /** `legId|referId` → the REFER waiting for the call layer's answer. */
  private readonly pending = new Map<string, PendingRefer>();

  constructor(
    private readonly stack: Pick<SipStack, 'respond'>,
    private readonly legs: ReferLegs,
    private readonly log: Logger,
  ) {}

  /** 404 with `Event: refer` and why: a REFER outside a dialog, or for a call we do not hold. */
  refuse(rq: SipRequest, status: number, reason: string): void {
    this.stack.respond(rq, status, { headers: referHeaders(status, reason) });
  }

  /** A REFER in the dialog of `legId` (its CSeq already accepted by the dialog). */
  received(legId: string, rq: SipRequest): void {
    const referTo = rq.headers['refer-to'];
    if (!referTo?.uri) {
      // RFC 3515 §2.4.1: exactly one Refer-To.
      this.stack.respond(rq, 400, { reason: 'Missing Refer-To' });
      return;
    }
    const referId = String(rq.headers.cseq.seq);
    const key = `${legId}|${referId}`;
    if (this.pending.has(key)) return;
    const timer = setTimeout(() => {
      if (this.pending.delete(key)) {
        this.log.warn({ legId, referId }, 'REFER not answered in time: 500');
        this.stack.respond(rq, 500, { headers: referHeaders(500, 'REFER not handled') });
      }
    }, SipTimers.REFER_ANSWER);
    timer.unref();
    this.pending.set(key, { rq, timer });
    this.legs.emit(legId, {
      type: 'sip.refer',
      legId,
      referId,
      referTo: referTo.uri,
      target: userOfUri(referTo.uri),
      transferor: userOfUri(Array.isArray(rq.headers.contact) ? rq.headers.contact[0]?.uri : undefined),
      transferee: userOfUri(rq.headers.to?.uri),
    });
  }

  answerRefer(legId: string, referId: string, status: number, reason?: string): void {
    const key = `${legId}|${referId}`;
    const p = this.pending.get(key);
    if (!p) return;
    this.pending.delete(key);
    clearTimeout(p.timer);
    const headers =
      status >= 200 && status < 300 ? { event: 'refer' } : referHeaders(status, reason ?? 'REFER refused');
    this.stack.respond(p.rq, status, { headers });
  }

  notifyRefer(legId: string, referId: string, status: number, terminated: boolean): void {
    this.legs.sendInDialog(legId, 'NOTIFY', {
      headers: {
        event: `refer;id=${referId}`,
        'subscription-state': terminated
          ? 'terminated;reason=noresource'
          : `active;expires=${REFER_SUBSCRIPTION_SECONDS}`,
      },
      content: sipfragOf(status),
      contentType: 'message/sipfrag;version=2.0',
    });
  }

  /** Sends our REFER in the leg's dialog. */
  refer(legId: string, referTo: string): void {
    const sent = this.legs.sendInDialog(
      legId,
      'REFER',
      { headers: { 'refer-to': { uri: referTo, params: {} } } },
      (rs) => {
        if (rs.status >= 200) this.legs.emit(legId, { type: 'sip.referResult', legId, status: rs.status });
      },
    );
    // No dialog: as if the far end had refused it.
    if (sent === null) this.legs.emit(legId, { type: 'sip.referResult', legId, status: 481 });
  }

  /** A NOTIFY in the dialog of `legId`: the progress of a REFER we sent. */
  notifyReceived(legId: string, rq: SipRequest): void {
    const event = (headerText(rq, 'event') ?? '').split(';')[0]?.trim().toLowerCase();
    if (event !== 'refer') {
      this.stack.respond(rq, 489);
      return;
    }
    this.stack.respond(rq, 200);
    const state = (headerText(rq, 'subscription-state') ?? '').trim().toLowerCase();
    this.legs.emit(legId, {
      type: 'sip.referNotify',
      legId,
      status: sipfragStatus(rq.content),
      terminated: state.startsWith('terminated'),
    });
  }

  /** Refuses the REFERs still waiting on a leg that ended (its dialog is gone). */
  legEnded(legId: string): void {
    for (const [key, p] of this.pending) {
      if (!key.startsWith(`${legId}|`)) continue;
      this.pending.delete(key);
      clearTimeout(p.timer);
      this.stack.respond(p.rq, 481, { headers: referHeaders(481, 'call ended') });
    }
  }
}

/** `Event: refer` and a Reason header (RFC 3326) with the refusal's text. */
function referHeaders(status: number, reason: string): Record<string, string> {
  return { event: 'refer', reason: `SIP;cause=${status};text="${reason.replace(/["\\\r\n]/g, '')}"` };
}
