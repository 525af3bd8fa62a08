/**
 * USSD push (Restcomm `POST /Accounts/{sid}/UssdPush`; docs/ussd.md): From, To and Url are required
 * (400 otherwise), Method, FallbackUrl, FallbackMethod, StatusCallback and StatusCallbackMethod
 * optional. The session fetches Url, then sends its message to the subscriber through the USSD
 * gateway (USSD_GATEWAY_URI). Answers 201 with the session's Call (queued, outbound-api).
 */
import type { UssdRuntime } from '../../actors/ussd/ussd-runtime.js';
import { AppError } from '../../errors.js';
import { AddressKind } from '../../numbers/address.js';
import { addressParam } from '../address-param.js';
import { accountOf, formatOf } from '../context.js';
import { one, type RouteSpec } from '../openapi/spec.js';
import { Params } from '../params.js';
import { send } from '../render.js';
import type { RouteTable } from '../router.js';
import { callDto } from '../serializers/call.js';
import { API_ROOT, API_VERSION } from '../uris.js';
import { methodParam, urlParam } from '../validate.js';

export interface UssdRouteDeps {
  /** The USSD runtime; null when SIP is disabled. */
  readonly ussd: UssdRuntime | null;
  /** Whether USSD_GATEWAY_URI is set (pushes need it). */
  readonly gatewayConfigured: boolean;
  readonly publicUrl: string;
}

/** The subscriber: a number (MSISDN) as the gateway knows it. */
const TO_FORMS = [AddressKind.E164, AddressKind.Digits, AddressKind.ShortCode] as const;
/** The service the message comes from: a number, a short code or a USSD code. */
const FROM_FORMS = [
  AddressKind.E164,
  AddressKind.ShortCode,
  AddressKind.Digits,
  AddressKind.UssdCode,
] as const;

export function ussdRoutes(routes: RouteTable, deps: UssdRouteDeps): void {
  const base = `${API_ROOT}/Accounts/:accountSid/UssdPush`;
  routes.resource(base, {
    POST: async (_req, res) => {
      const account = accountOf(res);
      const p = Params.body(res);
      const from = p.get('From');
      const to = p.get('To');
      if (!from) throw new AppError('MissingParameter', 'From is required');
      if (!to) throw new AppError('MissingParameter', 'To is required');
      const url = urlParam(p, 'Url');
      if (!url) throw new AppError('MissingParameter', 'Url is required');
      addressParam('From', from, FROM_FORMS);
      addressParam('To', to, TO_FORMS);
      const fallbackUrl = urlParam(p, 'FallbackUrl') ?? null;
      const statusCallback = urlParam(p, 'StatusCallback') ?? null;
      const request = {
        accountSid: account.sid,
        from,
        to,
        url,
        method: methodParam(p, 'Method') ?? 'POST',
        fallback: fallbackUrl
          ? { url: fallbackUrl, method: methodParam(p, 'FallbackMethod') ?? 'POST' }
          : null,
        statusCallback: statusCallback
          ? { url: statusCallback, method: methodParam(p, 'StatusCallbackMethod') ?? 'POST' }
          : null,
        apiVersion: API_VERSION,
      } as const;
      if (!deps.ussd) throw new AppError('Unavailable', 'USSD is not available: SIP is disabled');
      if (!deps.gatewayConfigured)
        throw new AppError('Unavailable', 'USSD push needs a USSD gateway (USSD_GATEWAY_URI)');
      const record = await deps.ussd.push(request);
      const format = formatOf(res);
      res.setHeader('Location', `${deps.publicUrl}${API_ROOT}/Accounts/${account.sid}/Calls/${record.sid}`);
      send(res, format, 'Call', callDto(record, format), 201);
    },
  });
  routes.describe(base, USSD_PUSH_SPEC);
}

const USSD_PUSH_SPEC: RouteSpec = {
  tag: 'USSD',
  POST: {
    summary: 'Push a USSD message or menu to a subscriber',
    params: [
      { name: 'From', required: true, description: 'The service: E.164 number, short code or USSD code' },
      { name: 'To', required: true, description: "The subscriber's number" },
      { name: 'Url', required: true, type: 'url', description: 'USSD markup to send' },
      { name: 'Method', description: 'GET or POST (default POST)' },
      { name: 'FallbackUrl', type: 'url' },
      { name: 'FallbackMethod' },
      { name: 'StatusCallback', type: 'url', description: 'Requested when the session ends' },
      { name: 'StatusCallbackMethod' },
    ],
    response: one('Call', 201),
  },
};
