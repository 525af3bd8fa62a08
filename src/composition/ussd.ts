/**
 * Composition of USSD (docs/ussd.md): the session machine with its live effects, the runtime, the
 * SIP hook that hands it every new INVITE whose body is `application/vnd.3gpp.ussd+xml`, and the
 * push's INVITE to the configured USSD gateway. Without SIP there is no USSD runtime.
 */
import type { AccountService } from '../actors/account/account-service.js';
import type { CallObserver } from '../actors/call/call-observers.js';
import { webhookFetcher } from '../actors/interpreter/services.js';
import { createUssdMachine } from '../actors/ussd/ussd.machine.js';
import type { UssdContext } from '../actors/ussd/ussd.types.js';
import { USSD_CONTENT_TYPE } from '../actors/ussd/ussd-body.js';
import { liveUssdEffects } from '../actors/ussd/ussd-live-effects.js';
import { routeUssd } from '../actors/ussd/ussd-routing.js';
import { UssdRuntime } from '../actors/ussd/ussd-runtime.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { PlaceCall } from '../sip/port.js';
import type { SipService } from '../sip/service.js';
import { formatSipAddress, parseHostOrSipUri } from '../sip/sip-uri.js';
import type { WebhookClient } from '../webhooks/index.js';
import type { Lifecycle } from './lifecycle.js';
import type { Repositories } from './stores.js';

export interface UssdDeps {
  readonly sip: SipService | null;
  readonly repositories: Repositories;
  readonly accounts: AccountService;
  readonly webhooks: WebhookClient;
  /** Live views of calls (the supervisor's). */
  readonly observers?: readonly CallObserver[];
}

/** The INVITE of a push: To's user at the gateway, From's user at our address, its credentials. */
export function gatewayCallOf(config: Config): ((session: UssdContext, body: string) => PlaceCall) | null {
  const { gatewayUri, gatewayUser, gatewayPassword } = config.ussd;
  if (gatewayUri === null) return null;
  const gateway = parseHostOrSipUri(gatewayUri);
  const credentials =
    gatewayUser !== null ? { username: gatewayUser, password: gatewayPassword ?? '' } : undefined;
  return (session, body) => ({
    requestUri: formatSipAddress(session.to, gateway.host, { port: gateway.port, params: gateway.params }),
    from: { uri: formatSipAddress(session.from, config.sip.publicAddress) },
    to: { uri: formatSipAddress(session.to, gateway.host, { port: gateway.port }) },
    sdp: body,
    contentType: USSD_CONTENT_TYPE,
    ...(credentials ? { credentials } : {}),
  });
}

export function composeUssd(
  config: Config,
  logger: Logger,
  deps: UssdDeps,
  lifecycle: Lifecycle,
): UssdRuntime | null {
  const { sip, accounts, webhooks } = deps;
  if (!sip) return null;
  const { calls, numbers, applications, notifier } = deps.repositories;
  const authTokenOf = async (sid: string) => (await accounts.get(sid))?.authToken ?? '';
  const gatewayCall = gatewayCallOf(config);
  const machine = createUssdMachine(
    liveUssdEffects({
      sip: sip.legs,
      fetch: webhookFetcher(webhooks, authTokenOf),
      notify: (n) => notifier.notify(n),
      gatewayCall: (session, body) => gatewayCall?.(session, body) ?? null,
    }),
  );
  const runtime = new UssdRuntime({
    sip: sip.legs,
    machine,
    calls,
    route: (invite) =>
      routeUssd(invite, {
        findNumber: (n) => numbers.findByNumber(n),
        getApplication: (accountSid, sid) => applications.get(accountSid, sid),
        accountStatus: async (sid) => (await accounts.get(sid))?.status ?? null,
      }),
    notify: (n) => notifier.notify(n),
    observers: deps.observers ?? [],
    sendCallback: async (accountSid, callSid, url, method, params) => {
      const authToken = await authTokenOf(accountSid);
      await webhooks.request({
        url,
        method,
        params: Object.entries(params),
        accountSid,
        authToken,
        context: { callSid },
      });
    },
    logger: logger.child({ component: 'ussd' }),
  });
  sip.legs.onInviteWithBody(USSD_CONTENT_TYPE, (invite) => runtime.onInvite(invite));
  lifecycle.onClose(async () => runtime.stop());
  return runtime;
}
