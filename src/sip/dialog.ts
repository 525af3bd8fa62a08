/**
 * SIP dialogs as plain, serialisable data (RFC 3261 §12), so a call actor's snapshot can carry its
 * leg's dialog and another node can continue it. Pure functions only: creation on the UAC and UAS
 * side, in-dialog request building with CSeq rules, the ACK for a 2xx, and request matching.
 */
import type { StackRouteEntry } from 'sip';
import type { Flow } from './flow.js';
import { detached, newBranch, type SipRequest, type SipResponse, tagOf, wireUri } from './message.js';

export interface DialogParty {
  readonly uri: string;
  readonly name?: string;
}

export interface Dialog {
  readonly role: 'uac' | 'uas';
  readonly callId: string;
  readonly localTag: string;
  readonly remoteTag: string;
  readonly local: DialogParty;
  readonly remote: DialogParty;
  /** Our last CSeq number used in this dialog. */
  readonly localCseq: number;
  /** Highest CSeq seen from the peer; null until it sends a request. */
  readonly remoteCseq: number | null;
  /** Route set, in the order requests must carry it. */
  readonly routeSet: readonly string[];
  /** Where in-dialog requests go (the peer's Contact). */
  readonly remoteTarget: string;
  /** Our Contact. */
  readonly localContact: string;
  /** When the peer is a client reached over its own connection. */
  readonly flow: Flow | null;
}

/** A dialog as persisted in a call snapshot: plain data, without the live connection. */
export type PersistedDialog = Omit<Dialog, 'flow'>;

export function persistedDialog(d: Dialog): PersistedDialog {
  const { flow: _flow, ...rest } = d;
  return rest;
}

const routeUri = (r: StackRouteEntry): string => wireUri(r.uri);

function contactOf(m: SipRequest | SipResponse): string | null {
  const c = m.headers.contact;
  if (!c || c === '*' || !c[0]) return null;
  return typeof c[0].uri === 'string' ? c[0].uri : null;
}

function party(na: { uri: string; name?: string }): DialogParty {
  return na.name ? { uri: na.uri, name: na.name } : { uri: na.uri };
}

/** UAC side, from the INVITE we sent and a 1xx/2xx carrying a To-tag (§12.1.2). */
export function uacDialog(
  invite: SipRequest,
  rs: SipResponse,
  localContact: string,
  flow: Flow | null,
): Dialog | null {
  const remoteTag = tagOf(rs.headers.to);
  const localTag = tagOf(invite.headers.from);
  const target = contactOf(rs);
  if (!remoteTag || !localTag || !target) return null;
  return {
    role: 'uac',
    callId: invite.headers['call-id'],
    localTag,
    remoteTag,
    local: party(invite.headers.from),
    remote: party(rs.headers.to),
    localCseq: invite.headers.cseq.seq,
    remoteCseq: null,
    routeSet: (rs.headers['record-route'] ?? []).map(routeUri).reverse(),
    remoteTarget: target,
    localContact,
    flow,
  };
}

const detachedParty = (na: { uri: string; name?: string }): DialogParty =>
  na.name ? { uri: detached(na.uri), name: detached(na.name) } : { uri: detached(na.uri) };

/**
 * UAS side, from a dialog-creating INVITE and the To-tag we chose (§12.1.1). Its text is copied out
 * of the INVITE's (the parser's values are slices of it): the dialog outlives the INVITE by the
 * whole call and Timer B, and would otherwise keep all of the INVITE's text alive.
 */
export function uasDialog(
  invite: SipRequest,
  localTag: string,
  localContact: string,
  flow: Flow | null,
): Dialog | null {
  const remoteTag = tagOf(invite.headers.from);
  const target = contactOf(invite);
  if (!target) return null;
  return {
    role: 'uas',
    callId: detached(invite.headers['call-id']),
    localTag,
    remoteTag: remoteTag ? detached(remoteTag) : '',
    local: detachedParty(invite.headers.to),
    remote: detachedParty(invite.headers.from),
    localCseq: 0,
    remoteCseq: invite.headers.cseq.seq,
    routeSet: (invite.headers['record-route'] ?? []).map((r) => detached(routeUri(r))),
    remoteTarget: detached(target),
    localContact,
    flow,
  };
}

/** Whether an incoming request belongs to the dialog (Call-ID and both tags, §12.2.2). */
export function matchesRequest(d: Dialog, rq: SipRequest): boolean {
  return (
    rq.headers['call-id'] === d.callId &&
    tagOf(rq.headers.to) === d.localTag &&
    (tagOf(rq.headers.from) ?? '') === d.remoteTag
  );
}

/**
 * CSeq rule for a request from the peer (§12.2.2): lower than the last one seen → 500; otherwise
 * the dialog remembers the new number. ACK and CANCEL reuse numbers and are not checked.
 */
export function acceptRemoteCseq(d: Dialog, rq: SipRequest): Dialog | null {
  if (rq.method === 'ACK' || rq.method === 'CANCEL') return d;
  const seq = rq.headers.cseq.seq;
  if (d.remoteCseq !== null && seq <= d.remoteCseq) return null;
  return { ...d, remoteCseq: seq };
}

function request(
  d: Dialog,
  method: string,
  seq: number,
  extra: Record<string, unknown>,
  content?: string,
): SipRequest {
  const headers: SipRequest['headers'] = {
    via: [],
    to: {
      uri: d.remote.uri,
      ...(d.remote.name ? { name: d.remote.name } : {}),
      params: { tag: d.remoteTag },
    },
    from: { uri: d.local.uri, ...(d.local.name ? { name: d.local.name } : {}), params: { tag: d.localTag } },
    'call-id': d.callId,
    cseq: { seq, method },
    'max-forwards': 70,
    ...(d.routeSet.length ? { route: d.routeSet.map((uri) => ({ uri, params: {} })) } : {}),
    ...extra,
  };
  if (!d.remoteTag) headers.to = { ...headers.to, params: {} };
  return content === undefined
    ? { method, uri: d.remoteTarget, version: '2.0', headers }
    : { method, uri: d.remoteTarget, version: '2.0', headers, content };
}

/** A new in-dialog request (BYE, re-INVITE, INFO, MESSAGE): the dialog's CSeq goes up by one. */
export function nextRequest(
  d: Dialog,
  method: string,
  options: { headers?: Record<string, unknown>; content?: string; contentType?: string } = {},
): { dialog: Dialog; request: SipRequest } {
  const seq = d.localCseq + 1;
  const extra: Record<string, unknown> = { ...(options.headers ?? {}) };
  if (method === 'INVITE') extra.contact = [{ uri: d.localContact, params: {} }];
  if (options.content !== undefined) extra['content-type'] = options.contentType ?? 'application/sdp';
  return { dialog: { ...d, localCseq: seq }, request: request(d, method, seq, extra, options.content) };
}

/** The ACK for a 2xx to the INVITE with CSeq `inviteSeq` (§13.2.2.4): same number, own branch. */
export function ackFor2xx(d: Dialog, inviteSeq: number): SipRequest {
  const ack = request(d, 'ACK', inviteSeq, {});
  ack.headers.via = [{ protocol: 'UDP', host: '', params: { branch: newBranch() } }];
  return ack;
}
