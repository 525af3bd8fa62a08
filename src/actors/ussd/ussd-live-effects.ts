/**
 * The live `UssdEffects`: SIP through the SIP port, markup through the MarkupFetcher (signed,
 * retried, falling back, writing Notifications like every webhook), the length rule's Notification.
 */
import type { NotifyInput } from '../../notifications/notifier.js';
import type { PlaceCall, SipPort } from '../../sip/port.js';
import { MAX_DIAGNOSTIC_NOTIFICATIONS } from '../interpreter/interpreter.types.js';
import { callStatusParam, requestParams } from '../interpreter/params.js';
import type { MarkupFetcher, MarkupRequest } from '../interpreter/services.js';
import type { UssdContext } from './ussd.types.js';
import { USSD_CONTENT_TYPE } from './ussd-body.js';
import type { UssdEffects, UssdFetchOutcome } from './ussd-effects.js';
import { readUssdMarkup, USSD_TOO_LONG_CODE } from './ussd-markup.js';

export interface LiveUssdEffectsDeps {
  readonly sip: Pick<SipPort, 'sendProvisional' | 'answer' | 'sendInfo' | 'hangUp' | 'placeCall' | 'reject'>;
  readonly fetch: MarkupFetcher;
  readonly notify: (input: NotifyInput) => unknown;
  /** The INVITE of a push to the USSD gateway; null when no gateway is configured. */
  readonly gatewayCall: (session: UssdContext, body: string) => PlaceCall | null;
}

export function liveUssdEffects(d: LiveUssdEffectsDeps): UssdEffects {
  return {
    answer: (sid) => {
      d.sip.sendProvisional(sid, 180);
      d.sip.answer(sid, '');
    },
    invite: (session, body) => {
      const call = d.gatewayCall(session, body);
      // Checked by the REST route before a push is accepted; a gateway removed since fails the leg.
      if (call) d.sip.placeCall(session.sid, call);
      else d.sip.reject(session.sid, 503);
    },
    sendInfo: (sid, body) => d.sip.sendInfo(sid, USSD_CONTENT_TYPE, body),
    hangUp: (sid, body) => d.sip.hangUp(sid, { contentType: USSD_CONTENT_TYPE, content: body }),
    fetchReply: async (session, request) => {
      const req: MarkupRequest = {
        url: request.url,
        method: request.method,
        params: requestParams(
          {
            callSid: session.sid,
            accountSid: session.accountSid,
            from: session.from,
            to: session.to,
            direction: session.direction,
            endpointId: session.sid,
            apiVersion: session.apiVersion,
            parentCallSid: null,
            forwardedFrom: null,
            callerName: null,
            extraParams: [],
          },
          callStatusParam(session.answeredAt !== null),
          request.params,
        ),
        fallback: request.fallback,
        accountSid: session.accountSid,
        callSid: session.sid,
      };
      const res = await d.fetch(req);
      if (!res.ok) return { ok: false };
      const base = {
        accountSid: session.accountSid,
        callSid: session.sid,
        requestUrl: res.url,
        requestMethod: res.method,
        requestVariables: req.params,
      };
      const read = readUssdMarkup(res.body);
      if (!read.ok) {
        d.notify({
          ...base,
          errorCode: read.error.code,
          messageText: `invalid USSD markup (${read.error.reason}): ${read.error.message}`,
          responseHeaders: res.headers,
          responseBody: res.body,
        });
        return { ok: false };
      }
      for (const diag of read.diagnostics.slice(0, MAX_DIAGNOSTIC_NOTIFICATIONS))
        d.notify({ ...base, errorCode: diag.code, log: 1, messageText: diag.message });
      const { tooLong } = read.reply;
      if (tooLong)
        d.notify({
          ...base,
          errorCode: USSD_TOO_LONG_CODE,
          messageText: `USSD text of ${tooLong.length} characters is longer than the ${tooLong.max} permitted for language ${read.reply.language}`,
        });
      const outcome: UssdFetchOutcome = {
        ok: true,
        reply: read.reply,
        documentUrl: res.usedFallback && request.fallback ? request.fallback.url : request.url,
      };
      return outcome;
    },
  };
}
