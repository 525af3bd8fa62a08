/**
 * Browser legs: a client registered over WebSocket (RFC 7118, WS or WSS) is a browser, and only
 * speaks WebRTC media (ICE, DTLS-SRTP, RFC 8827/8829). Calls to it are offered WebRTC; every other
 * contact gets plain RTP. A browser's own offer is recognised by the media engine from its SDP.
 */
import type { Flow } from '../../sip/port.js';

/** Whether a client's binding was registered by a browser (over WS or WSS). */
export function isBrowserBinding(binding: { readonly flow: Pick<Flow, 'protocol'> } | undefined): boolean {
  return binding?.flow.protocol === 'WS' || binding?.flow.protocol === 'WSS';
}
