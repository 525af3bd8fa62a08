/**
 * Blind transfer by SIP REFER (RFC 5589 §6.1, RFC 3515) on calls bridged by `<Dial>`, as Restcomm
 * does it, plus the NOTIFYs it leaves out:
 *
 * - The leg that receives the REFER is the transferor; the leg it is bridged with is the transferee.
 *   The REFER is refused with 404 when the legs are not bridged, or when the number originally
 *   dialled (the inbound leg of the pair: the transferor itself, or the parent of a Dial child) has
 *   neither ReferUrl nor ReferApplicationSid.
 * - Accepted (202, NOTIFY 100 Trying), the transferee's markup stops and the number's ReferUrl
 *   (ReferMethod, default POST; or the application's RcmlUrl with POST) runs on the transferee with
 *   ReferTarget, Transferor and Transferee among its parameters (also on its status callbacks).
 * - The transferor hears the final status of the transferee's next `<Dial>` (200 when answered, else
 *   the new leg's SIP status) in a final NOTIFY, then is released (BYE). A transferee that ends
 *   before it dialled anyone gives 487; nothing within the subscription's life gives 408.
 *
 * The call actor (call.machine.ts) drives this; what reads or reaches other calls is here, over the
 * runtime's registry, and given to the actor as effects.
 */
import type { Application } from '../../store/application-store.js';
import type { CallStatus } from '../../store/call-store.js';
import type { IncomingNumber } from '../../store/number-store.js';
import type { CallContext, CallEmitted, CallEvent, ReferPlan, Transfer } from './call.types.js';
import { ReferRefusal } from './call-effects.js';

/** What REFER handling reads and reaches across calls (the runtime's registry and the stores). */
export interface TransferDeps {
  contextOf(sid: string): CallContext | null;
  liveStatus(sid: string): CallStatus | null;
  send(sid: string, event: CallEvent): boolean;
  numberOf(accountSid: string, sid: string): Promise<IncomingNumber | null>;
  applicationOf(accountSid: string, sid: string): Promise<Pick<Application, 'rcmlUrl'> | null>;
}

/** Status of the transferor's final NOTIFY when the transferee ended before its new leg decided. */
export const TRANSFEREE_GONE_STATUS = 487;

/** The transferee leg and the ReferUrl of `call`'s REFER, or a {@link ReferRefusal}. */
export async function planRefer(call: CallContext, d: TransferDeps): Promise<ReferPlan> {
  const peer = call.peer ? d.contextOf(call.peer) : null;
  if (!peer || d.liveStatus(peer.origin.sid) !== 'in-progress')
    throw new ReferRefusal(404, 'SIP Refer failed: the call is not bridged to another call by Dial');
  const inbound =
    call.origin.direction === 'outbound-dial' && call.origin.parentCallSid
      ? d.contextOf(call.origin.parentCallSid)
      : call;
  const number =
    inbound?.origin.direction === 'inbound' && inbound.origin.phoneNumberSid
      ? await d.numberOf(inbound.origin.accountSid, inbound.origin.phoneNumberSid)
      : null;
  const application = number?.referApplicationSid
    ? await d.applicationOf(number.accountSid, number.referApplicationSid)
    : null;
  const url = application ? application.rcmlUrl : (number?.referUrl ?? null);
  if (!number || !url)
    throw new ReferRefusal(
      404,
      'SIP Refer failed: set a Refer URL or Refer application for the incoming phone number',
    );
  return {
    transferee: peer.origin.sid,
    app: {
      url,
      method: application ? 'POST' : number.referMethod,
      fallbackUrl: null,
      fallbackMethod: 'POST',
    },
  };
}

/** The transfer's parameters on the transferee's markup requests and status callbacks. */
export function transferParams(t: Pick<Transfer, 'referTarget' | 'transferor' | 'transferee'>) {
  return [
    ['ReferTarget', t.referTarget],
    ['Transferor', t.transferor],
    ['Transferee', t.transferee],
  ] as const;
}

/**
 * Tells the transferor of `transfereeSid` (if it is one, and still waiting) the final status of the
 * transferee's new leg.
 */
export function reportTransfer(
  d: Pick<TransferDeps, 'contextOf' | 'send'>,
  transfereeSid: string,
  status: number,
): void {
  const by = d.contextOf(transfereeSid)?.transfer?.by;
  if (by) d.send(by, { type: 'app.referOutcome', status, at: Date.now() });
}

/** A transferee that ends releases its waiting transferor (final NOTIFY 487). */
export function transferEnds(send: (sid: string, event: CallEvent) => boolean) {
  return (e: CallEmitted): void => {
    const by = e.type === 'call.ended' ? e.call.transfer?.by : undefined;
    if (by) send(by, { type: 'app.referOutcome', status: TRANSFEREE_GONE_STATUS, at: e.at });
  };
}
