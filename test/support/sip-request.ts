/** A parsed INVITE as the stack hands it to the SIP layer's parts, for their unit tests. */
import type { SipRequest } from '../../src/sip/message.js';

export function inviteRequest(
  options: { branch?: string | undefined; callId?: string; seq?: number; fromTag?: string } = {},
): SipRequest {
  return {
    method: 'INVITE',
    uri: 'sip:+15550001111@127.0.0.1',
    version: '2.0',
    headers: {
      via: [
        {
          version: '2.0',
          protocol: 'UDP',
          host: '127.0.0.2',
          port: 5070,
          params: { branch: options.branch },
        },
      ],
      'call-id': options.callId ?? 'c1',
      cseq: { seq: options.seq ?? 1, method: 'INVITE' },
      to: { uri: 'sip:+15550001111@127.0.0.1', params: {} },
      from: { uri: 'sip:a@127.0.0.2', params: { tag: options.fromTag ?? 't' } },
    },
  } as SipRequest;
}
