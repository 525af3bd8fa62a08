/**
 * What a SIP event of a leg means to its call actor: the one translation from the SIP port's events
 * into call events (null for those the actor does not take).
 */
import { persistedDialog, type SipEvent } from '../../sip/port.js';
import type { CallEvent } from './call.types.js';

export function callEventOf(e: SipEvent, at: number): CallEvent | null {
  switch (e.type) {
    case 'sip.refer':
      return {
        type: 'sip.refer',
        refer: {
          id: e.referId,
          referTo: e.referTo,
          target: e.target,
          transferor: e.transferor,
          transferee: e.transferee,
        },
        at,
      };
    case 'sip.ringing':
    case 'sip.bye':
    case 'sip.cancel':
      return { type: e.type, at };
    case 'sip.referResult':
      return { type: 'sip.referResult', status: e.status };
    case 'sip.referNotify':
      return { type: 'sip.referNotify', sipfrag: e.status, terminated: e.terminated };
    case 'sip.answered':
      return {
        type: 'sip.answered',
        at,
        dialog: persistedDialog(e.dialog),
        ...(e.sdp ? { sdp: e.sdp } : {}),
        ...(e.xHeaders ? { sipHeaders: e.xHeaders } : {}),
      };
    case 'sip.confirmed':
      return { type: 'sip.dialog', dialog: persistedDialog(e.dialog) };
    case 'sip.failed':
      return {
        type: 'sip.failed',
        status: e.status,
        reason: e.reason,
        at,
        ...(e.callId ? { sipCallId: e.callId } : {}),
        ...(e.xHeaders ? { sipHeaders: e.xHeaders } : {}),
      };
    case 'sip.ended':
      // A leg we did not end ourselves: no ACK for our 2xx, or its connection died.
      return e.cause === 'ack-timeout' || e.cause === 'transport' ? { type: 'sip.bye', at } : null;
    default:
      return null;
  }
}
