/** Pieces of SIP messages the call legs build and read (name-addrs, header maps, merge keys). */
import type { StackNameAddr } from 'sip';
import type { Dialog } from './dialog.js';
import type { Flow } from './flow.js';
import { type SipRequest, type SipResponse, sipUriOf, tagOf } from './message.js';
import type { Party } from './port.js';
import { formatSipAddress } from './sip-uri.js';
import type { SipStack } from './stack.js';

/** Generic headers of an INVITE that callers may read (lower-case names → text). */
export const STRUCTURED = new Set([
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

/** Our Contact for a leg: the transport it runs on, our port of that transport. */
export function contactFor(stack: SipStack, legId: string, flow: Flow | null, requestUri?: string): string {
  const byUri = requestUri === undefined ? undefined : sipUriOf(requestUri)?.params.transport;
  // A flow another node holds is reached through that node, which relays back to us over UDP.
  const relayed = flow !== null && !stack.holdsFlow(flow);
  const transport = relayed ? 'UDP' : (flow?.protocol ?? (byUri?.toLowerCase() === 'tcp' ? 'TCP' : 'UDP'));
  return formatSipAddress(legId, stack.host, {
    port: stack.transports.portFor(transport),
    params: transport === 'UDP' ? {} : { transport: transport.toLowerCase() },
  });
}

/** `Call-ID|From tag|CSeq method`: the same request, whichever path it came by (§8.2.2.2). */
export function mergeKey(rq: SipRequest): string {
  return `${rq.headers['call-id']}|${tagOf(rq.headers.from) ?? ''}|${rq.headers.cseq.seq} ${rq.method}`;
}

export function nameAddr(p: Party, params: Record<string, string>): StackNameAddr {
  return p.displayName
    ? { name: `"${p.displayName.replace(/(["\\])/g, '\\$1')}"`, uri: p.uri, params }
    : { uri: p.uri, params };
}

export function party(na: StackNameAddr): Party {
  const name = na.name?.replace(/^"|"$/g, '');
  return name ? { uri: na.uri, displayName: name } : { uri: na.uri };
}

export function lowerKeys(h: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h ?? {})) out[k.toLowerCase()] = v;
  return out;
}

/** A dialog for a 2xx that lacks a Contact: in-dialog requests go to the Request-URI. */
export function fallbackDialog(
  sent: SipRequest,
  rs: SipResponse,
  contact: string,
  flow: Flow | null,
): Dialog {
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
