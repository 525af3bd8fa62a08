/**
 * Outbound routing policy: from a call's To (spec §Calls, create parameter `To`) and the account's
 * effective multi-provider configuration (spec §Multi-provider extension configuration and
 * §Multi-provider extension, behaviour 2-4) to the plan of the outgoing INVITE: Request-URI,
 * preloaded Route set, extra headers and proxy credentials. Pure: no I/O, no SIP stack.
 *
 * Rules (the spec is terse; where it is silent these are our decisions):
 *
 * 1. To forms ({@link parseCallTarget}). `client:<name>[?<Header>=<value>&...]` (the name is an
 *    RFC 2396 userinfo like a Client Login); `sip:`/`sips:` URIs (RFC 3261 §19.1); a number: E.164
 *    with a country code that exists, or 1-20 bare digits (national numbers, short codes); all
 *    read by src/numbers/address.ts, the parser REST and SMS use too. Anything else is a
 *    {@link TargetError}; so are `tel:` URIs and formatted numbers (`+1 (555) ...`), which are not To forms.
 * 2. Initial Request-URI. number → `sip:<number>@<hostport;params>` of `defaultProxy` when given,
 *    else of the first multi-provider proxy, else {@link NoRouteError} `no-outbound-route`.
 *    sip → the URI without its `?headers`. client → the first registered contact (its `?headers`
 *    dropped); none → {@link NoRouteError} `client-not-registered`.
 * 3. Caller headers. `input.headers`, then the target's own headers (URI headers, RFC 3261 §19.1.5,
 *    or the client form's headers) win on a case-insensitive name clash (the first spelling of the
 *    name is kept). Headers the SIP stack owns or that would subvert it are dropped silently
 *    ({@link IGNORED_TARGET_HEADERS}); names must be RFC 3261 tokens and values free of control
 *    characters, else {@link TargetError}.
 * 4. Multi-provider proxies (`outbound-voice[0].proxy`, behaviour 2 and 4). The first proxy whose
 *    `match` (default `.*`; a tenant pattern run on RE2 in linear time, see
 *    src/security/tenant-pattern.ts; unanchored unless the pattern anchors itself) finds
 *    the initial Request-URI wins: the Request-URI is rewritten to that proxy's scheme, host, port
 *    and inline parameters, keeping the original user part (and dropping the original parameters,
 *    which describe the original host, a password, and the proxy's `lr`); no Route. When no proxy
 *    matches, the call still leaves through the first proxy as an outbound proxy: the Request-URI
 *    is unchanged and the proxy URI (less password and headers) with `;lr` is the single preloaded
 *    Route (RFC 3261 §8.1.2; `lr` §19.1.1). Proxy entries are checked lazily: only the URI of the
 *    proxy used and the patterns up to the first match are parsed, so a broken later entry does not
 *    stop other calls; a broken entry that is reached is a {@link NoRouteError} `invalid-proxy`.
 * 5. Credentials of the proxy used: `{ username, password }` when `username` is set (an absent
 *    password is empty), for answering its 401/407 challenge.
 * 6. Proxy headers (behaviour 3), in order: `headerName` gets the parameter `;key=value` (value quoted
 *    when not a token). If the caller's headers already hold that header (case-insensitive) the
 *    parameter is appended to its value, else the header is added with value `key=value`. For
 *    From, To and Contact, which the SIP stack writes itself, the parameter goes to
 *    {@link OutgoingRequestPlan.headerParams} for the stack to append; parameters for the other
 *    ignored headers (Via, Call-ID...) are dropped.
 * 7. Without multi-provider proxies: number → `defaultProxy` as in rule 2, sip and client → direct.
 */

import {
  type Address,
  AddressError,
  AddressKind,
  describeForms,
  invalidHeaderReason,
  parseAddress,
} from '../numbers/address.js';
import { compileTenantPattern, type TenantPattern, TenantPatternError } from '../security/tenant-pattern.js';
import type { MultiProviderConfig, OutboundProxy } from '../store/profile-store.js';
import { formatGenericValue } from './name-addr.js';
import { formatSipUri, parseSipUri, type SipUri, SipUriError } from './sip-uri.js';

/** A call's destination, as given in To (spec §Calls) or a Dial noun. */
export type CallTarget =
  | { kind: 'number'; number: string }
  | { kind: 'sip'; uri: string }
  | { kind: 'client'; name: string; headers: Record<string, string> };

/** What the SIP adapter sends: the INVITE's Request-URI, Route set and extra headers. */
export interface OutgoingRequestPlan {
  /** Request-URI to send. */
  requestUri: string;
  /** Preloaded Route URIs, each with `;lr` (RFC 3261 §8.1.2); empty when sent directly. */
  route: string[];
  /** Extra or modified SIP headers to set: name as given, value the full header value. */
  headers: Record<string, string>;
  /**
   * Parameters for headers the SIP stack writes itself (From, To, Contact), to append as
   * `;key=value` (value already quoted when needed), in order.
   */
  headerParams: Array<{ headerName: string; param: string }>;
  /** Digest credentials for a 401/407 from the proxy (RFC 3261 §22.2). */
  credentials?: { username: string; password: string };
  /** Index in `outbound-voice[0].proxy` of the proxy used. */
  proxyIndex?: number;
}

/** The To value is not a usable call target; `reason` is a sentence for the API client. */
export class TargetError extends Error {
  override readonly name = 'TargetError';
  constructor(
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`invalid call target: ${reason}`, options);
  }
}

/** Why no request can be planned. */
export const NoRouteReason = {
  /** A number target, and neither a default proxy nor a multi-provider proxy. */
  NoOutboundRoute: 'no-outbound-route',
  /** A client target without registered contacts. */
  ClientNotRegistered: 'client-not-registered',
  /** The preferred registered contact is not a valid SIP URI. */
  InvalidContact: 'invalid-contact',
  /** The proxy to use (multi-provider entry or default proxy) is unusable: bad URI or match pattern. */
  InvalidProxy: 'invalid-proxy',
} as const;
export type NoRouteReason = (typeof NoRouteReason)[keyof typeof NoRouteReason];

/** No outgoing request can be planned; `reason` is data, the message is for logs. */
export class NoRouteError extends Error {
  override readonly name = 'NoRouteError';
  constructor(
    readonly reason: NoRouteReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Header names (lower-case, with compact forms) never taken from a target or caller: the stack
 * owns the dialog and transaction headers (RFC 3261 §19.1.5 calls From, Call-ID, CSeq, Via and
 * Record-Route dangerous), `body` is the URI's body pseudo-header, and credentials come from the
 * proxy configuration only.
 */
export const IGNORED_TARGET_HEADERS: ReadonlySet<string> = new Set([
  'call-id',
  'i',
  'cseq',
  'via',
  'v',
  'from',
  'f',
  'to',
  't',
  'contact',
  'm',
  'max-forwards',
  'route',
  'record-route',
  'content-length',
  'l',
  'content-type',
  'c',
  'body',
  'authorization',
  'proxy-authorization',
]);

/** Ignored headers to which a proxy header entry may still add a parameter, via `headerParams`. */
const STACK_PARAM_HEADERS = new Set(['from', 'f', 'to', 't', 'contact', 'm']);

/** The To forms of a call (spec §Calls): numbers (E.164 or digits), client:<name>, sip: URIs. */
const CALL_TO_FORMS = [
  AddressKind.E164,
  AddressKind.ShortCode,
  AddressKind.Digits,
  AddressKind.Client,
  AddressKind.Sip,
] as const;

const TOKEN_RE = /^[A-Za-z0-9\-.!%*_+`'~]+$/;
const NUMBER_FORMS = [AddressKind.E164, AddressKind.ShortCode, AddressKind.Digits] as const;

function toAddress(text: string): Address {
  try {
    return parseAddress(text, { field: 'To', accept: CALL_TO_FORMS });
  } catch (e) {
    if (e instanceof AddressError) throw new TargetError(e.message, { cause: e.cause ?? e });
    throw e;
  }
}

function checkHeaders(headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) {
    const reason = invalidHeaderReason(name, value);
    if (reason) throw new TargetError(reason);
  }
}

/**
 * Parses the To of a call (spec §Calls): `client:alice?X-Foo=1&X-Bar=2`, `sip:bob@example.com:5060`,
 * `+15551234567`, `911`, with the one address parser of src/numbers/address.ts.
 * @throws TargetError with a message fit for the API client
 */
export function parseCallTarget(to: string): CallTarget {
  const address = toAddress(to);
  switch (address.kind) {
    case 'client':
      return { kind: 'client', name: address.name, headers: address.headers };
    case 'sip':
      return { kind: 'sip', uri: to };
    default:
      return { kind: 'number', number: to };
  }
}

/** Case-insensitive header bag that keeps the first spelling and insertion order. */
class HeaderBag {
  private readonly byLower = new Map<string, { name: string; value: string }>();
  set(name: string, value: string): void {
    const key = name.toLowerCase();
    const current = this.byLower.get(key);
    this.byLower.set(key, { name: current?.name ?? name, value });
  }
  get(name: string): string | undefined {
    return this.byLower.get(name.toLowerCase())?.value;
  }
  toRecord(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const { name, value } of this.byLower.values()) out[name] = value;
    return out;
  }
}

function mergeCallerHeaders(bag: HeaderBag, headers: Record<string, string> | undefined): void {
  if (!headers) return;
  checkHeaders(headers);
  for (const [name, value] of Object.entries(headers)) {
    if (!IGNORED_TARGET_HEADERS.has(name.toLowerCase())) bag.set(name, value);
  }
}

function parseProxyUri(text: string, what: string): SipUri {
  let uri: SipUri;
  try {
    uri = parseSipUri(text);
  } catch (e) {
    if (e instanceof SipUriError) {
      throw new NoRouteError(NoRouteReason.InvalidProxy, `${what}: ${e.reason}`, { cause: e });
    }
    throw e;
  }
  if (uri.scheme === 'tel') throw new NoRouteError(NoRouteReason.InvalidProxy, `${what}: not a sip: URI`);
  return uri;
}

/** Request-URI at `via`'s scheme, host, port and parameters (less `lr`) with `user` as user part. */
function rewriteTo(user: string | undefined, via: SipUri): SipUri {
  const params: Record<string, string | null> = Object.create(null);
  for (const [name, value] of Object.entries(via.params)) if (name !== 'lr') params[name] = value;
  const uri: SipUri = { scheme: via.scheme, host: via.host, params, headers: {} };
  if (user !== undefined) uri.user = user;
  if (via.port !== undefined) uri.port = via.port;
  return uri;
}

function routeOf(proxy: SipUri): string {
  const params = 'lr' in proxy.params ? proxy.params : { ...proxy.params, lr: null };
  const { password: _password, ...withoutPassword } = proxy;
  return formatSipUri({ ...withoutPassword, params, headers: {} });
}

function matches(proxy: OutboundProxy, index: number, requestUri: string): boolean {
  if (proxy.match === undefined) return true;
  let pattern: TenantPattern;
  try {
    pattern = compileTenantPattern(proxy.match);
  } catch (e) {
    if (!(e instanceof TenantPatternError)) throw e;
    throw new NoRouteError(NoRouteReason.InvalidProxy, `proxy[${index}].match is not a valid pattern`, {
      cause: e,
    });
  }
  return pattern.test(requestUri);
}

/** Inputs of {@link planOutgoingRequest}. */
export interface PlanInput {
  target: CallTarget;
  /** For client targets: the registered contact URIs found by location lookup (first = preferred). */
  clientContacts?: readonly string[];
  /**
   * Platform default outbound proxy, a SIP URI like `sip:10.0.0.1:5060;transport=udp`: where number
   * targets go when no multi-provider proxy takes them.
   */
  defaultProxy?: string;
  /** The account's effective multi-provider configuration, if any. */
  multiProvider?: MultiProviderConfig | null;
  /** Headers the caller asked to set besides the target's own (e.g. from the dial verb), merged first. */
  headers?: Record<string, string>;
}

/**
 * Plans the outgoing INVITE for a call target under the account's multi-provider configuration;
 * the rules are in this module's header.
 *
 * @example
 * planOutgoingRequest({
 *   target: { kind: 'number', number: '+1555' },
 *   multiProvider: { 'outbound-voice': [{ proxy: [{ uri: 'sip:gw.example.com:5080;transport=tcp' }] }] },
 * }) // { requestUri: 'sip:+1555@gw.example.com:5080;transport=tcp', route: [], proxyIndex: 0, ... }
 * @throws NoRouteError when the call cannot be routed; TargetError when the target itself is invalid
 */
export function planOutgoingRequest(input: PlanInput): OutgoingRequestPlan {
  const { target } = input;
  const proxies = input.multiProvider?.['outbound-voice']?.[0]?.proxy ?? [];
  const proxyUris = new Map<number, SipUri>();
  const proxyUri = (i: number): SipUri => {
    let uri = proxyUris.get(i);
    if (!uri) {
      uri = parseProxyUri(proxies[i]!.uri, `proxy[${i}].uri`);
      proxyUris.set(i, uri);
    }
    return uri;
  };

  const bag = new HeaderBag();
  mergeCallerHeaders(bag, input.headers);

  let initial: SipUri;
  switch (target.kind) {
    case 'number': {
      const kind = toAddress(target.number).kind;
      if (kind === 'client' || kind === 'sip') {
        throw new TargetError(`To must be ${describeForms(NUMBER_FORMS)}`);
      }
      let via: SipUri;
      if (input.defaultProxy !== undefined) via = parseProxyUri(input.defaultProxy, 'default proxy');
      else if (proxies.length > 0) via = proxyUri(0);
      else throw new NoRouteError(NoRouteReason.NoOutboundRoute, 'no outbound route for number');
      initial = rewriteTo(target.number, via);
      break;
    }
    case 'sip': {
      const address = toAddress(target.uri);
      if (address.kind !== 'sip') throw new TargetError('a sip target needs a sip: or sips: URI');
      const uri = address.uri;
      mergeCallerHeaders(bag, uri.headers);
      initial = { ...uri, headers: {} };
      break;
    }
    case 'client': {
      if (toAddress(`client:${target.name}`).kind !== 'client') throw new TargetError('invalid client name');
      mergeCallerHeaders(bag, target.headers);
      const contact = input.clientContacts?.[0];
      if (contact === undefined) {
        throw new NoRouteError(NoRouteReason.ClientNotRegistered, 'client not registered');
      }
      try {
        initial = { ...parseSipUri(contact), headers: {} };
      } catch (e) {
        if (!(e instanceof SipUriError)) throw e;
        throw new NoRouteError(NoRouteReason.InvalidContact, `client contact: ${e.reason}`, { cause: e });
      }
      if (initial.scheme === 'tel') {
        throw new NoRouteError(NoRouteReason.InvalidContact, 'client contact: not a sip: URI');
      }
      break;
    }
  }

  const initialText = formatSipUri(initial);
  const plan: OutgoingRequestPlan = { requestUri: initialText, route: [], headers: {}, headerParams: [] };
  if (proxies.length === 0) {
    plan.headers = bag.toRecord();
    return plan;
  }

  const matched = proxies.findIndex((p, i) => matches(p, i, initialText));
  const index = matched === -1 ? 0 : matched;
  const proxy = proxies[index]!;
  if (matched === -1) plan.route = [routeOf(proxyUri(0))];
  else plan.requestUri = formatSipUri(rewriteTo(initial.user, proxyUri(matched)));
  plan.proxyIndex = index;
  if (proxy.username !== undefined) {
    plan.credentials = { username: proxy.username, password: proxy.password ?? '' };
  }
  applyProxyHeaders(bag, plan, proxy, index);
  plan.headers = bag.toRecord();
  return plan;
}

function applyProxyHeaders(
  bag: HeaderBag,
  plan: OutgoingRequestPlan,
  proxy: OutboundProxy,
  index: number,
): void {
  for (const [j, h] of (proxy.headers ?? []).entries()) {
    const where = `proxy[${index}].headers[${j}]`;
    if (!TOKEN_RE.test(h.headerName) || !TOKEN_RE.test(h.key)) {
      throw new NoRouteError(NoRouteReason.InvalidProxy, `${where}: headerName and key must be SIP tokens`);
    }
    let param: string;
    try {
      param = `${h.key}=${formatGenericValue(h.value)}`;
    } catch (e) {
      throw new NoRouteError(NoRouteReason.InvalidProxy, `${where}: value has control characters`, {
        cause: e,
      });
    }
    const lower = h.headerName.toLowerCase();
    if (STACK_PARAM_HEADERS.has(lower)) plan.headerParams.push({ headerName: h.headerName, param });
    else if (IGNORED_TARGET_HEADERS.has(lower)) continue;
    else {
      const current = bag.get(h.headerName);
      bag.set(h.headerName, current === undefined ? param : `${current};${param}`);
    }
  }
}
