/**
 * Inbound INVITEs: routed (inbound-routing.ts); a routed call gets its record (ringing) and an actor,
 * which sends the 180 and starts what runs it. A refused INVITE gets its SIP status and, where the
 * spec asks, a Notification. A leg that ends while it is being routed is dropped.
 */
import type { Logger } from '../../logger.js';
import type { NotifyInput } from '../../notifications/notifier.js';
import { sipUserAndHost } from '../../numbers/address.js';
import type { InboundInvite, SipEvent, SipPort } from '../../sip/port.js';
import { CallStatus } from '../../store/call-store.js';
import { DEFAULT_API_VERSION } from '../interpreter/interpreter.types.js';
import type { CallRuntime } from './call-runtime.js';
import type { InboundRoute } from './inbound-routing.js';
import { inputOf, newRecord } from './records.js';

export interface InboundCallsDeps {
  readonly sip: Pick<SipPort, 'reject'> & {
    onEvent(listener: (e: SipEvent) => void): () => void;
    /** A rejection of the handler's promise ends that leg (500) in the SIP adapter. */
    onInvite(handler: (invite: InboundInvite) => void | Promise<void>): void;
  };
  readonly routeInbound: (invite: InboundInvite) => Promise<InboundRoute>;
  readonly notify: (input: NotifyInput) => unknown;
  readonly logger: Logger;
}

export class InboundCalls {
  /** Inbound legs that ended while they were being routed. */
  private readonly goneEarly = new Set<string>();
  private readonly routing = new Set<string>();
  private readonly off: () => void;

  constructor(
    private readonly calls: CallRuntime,
    private readonly deps: InboundCallsDeps,
  ) {
    this.off = deps.sip.onEvent((e) => {
      if ('legId' in e && this.routing.has(e.legId) && (e.type === 'sip.cancel' || e.type === 'sip.ended'))
        this.goneEarly.add(e.legId);
    });
    deps.sip.onInvite((invite) => this.onInvite(invite));
  }

  stop(): void {
    this.off();
  }

  async onInvite(invite: InboundInvite): Promise<void> {
    const legId = invite.legId;
    this.routing.add(legId);
    let route: InboundRoute;
    try {
      route = this.calls.stopped
        ? { kind: 'reject', status: 503, reason: 'Shutting Down', notify: null }
        : await this.deps.routeInbound(invite);
    } catch (err) {
      this.deps.logger.error({ err, legId }, 'inbound routing failed');
      route = { kind: 'reject', status: 500, reason: 'Server Internal Error', notify: null };
    } finally {
      this.routing.delete(legId);
    }
    if (this.goneEarly.delete(legId)) return;
    if (route.kind === 'reject') {
      this.deps.sip.reject(legId, route.status, route.reason);
      if (route.notify)
        this.deps.notify({
          accountSid: route.notify.accountSid,
          errorCode: route.notify.errorCode,
          messageText: `Call to ${invite.requestUri} rejected: ${route.reason}`,
        });
      return;
    }
    const markup = route.kind === 'markup' ? route : null;
    const record = newRecord({
      sid: legId,
      accountSid: route.accountSid,
      from: route.from,
      to: route.to,
      direction: 'inbound',
      status: CallStatus.Ringing,
      apiVersion: markup ? markup.apiVersion : DEFAULT_API_VERSION,
      phoneNumberSid: markup?.number?.sid ?? null,
      callerName: invite.from.displayName ?? null,
      forwardedFrom: forwardedFrom(invite),
      sipCallId: invite.callId,
    });
    await this.calls.insert(record);
    const n = markup?.number;
    this.calls.spawn({
      ...inputOf(record),
      remoteSdp: invite.sdp,
      numberCallback: n?.statusCallback ? { url: n.statusCallback, method: n.statusCallbackMethod } : null,
      app: markup
        ? {
            kind: 'markup',
            url: markup.url,
            method: markup.method,
            fallbackUrl: markup.fallbackUrl,
            fallbackMethod: markup.fallbackMethod,
            answered: false,
          }
        : route.kind === 'client'
          ? { kind: 'client', login: route.login }
          : null,
    });
  }
}

/** The number the call was forwarded from (Diversion, RFC 5806), when present. */
function forwardedFrom(invite: InboundInvite): string | null {
  const d = invite.headers.diversion;
  if (!d) return null;
  return sipUserAndHost(d)?.user ?? null;
}
