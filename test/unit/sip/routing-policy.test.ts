import { monitorEventLoopDelay } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import {
  type CallTarget,
  IGNORED_TARGET_HEADERS,
  NoRouteError,
  NoRouteReason,
  type OutgoingRequestPlan,
  type PlanInput,
  parseCallTarget,
  planOutgoingRequest,
  TargetError,
} from '../../../src/sip/routing-policy.js';
import type { MultiProviderConfig, OutboundProxy } from '../../../src/store/profile-store.js';

const mp = (...proxy: OutboundProxy[]): MultiProviderConfig => ({ 'outbound-voice': [{ proxy }] });
const num = (number: string): CallTarget => ({ kind: 'number', number });
const sip = (uri: string): CallTarget => ({ kind: 'sip', uri });
const client = (name: string, headers: Record<string, string> = {}): CallTarget => ({
  kind: 'client',
  name,
  headers,
});
const ALICE_CONTACT = 'sip:alice@192.0.2.10:51234;transport=tcp;ob';

const errorOf = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('did not throw');
};

describe('parseCallTarget (spec §Calls, To)', () => {
  it.each<[string, CallTarget]>([
    ['+15551234567', num('+15551234567')],
    ['+1555', num('+1555')],
    ['911', num('911')],
    ['0044207946000', num('0044207946000')],
    ['sip:bob@example.com:5060', sip('sip:bob@example.com:5060')],
    ['SIP:bob@example.com', sip('SIP:bob@example.com')],
    ['sips:bob@example.com;transport=tls?X-Foo=1', sip('sips:bob@example.com;transport=tls?X-Foo=1')],
    ['sip:[2001:db8::1]:5080', sip('sip:[2001:db8::1]:5080')],
    ['client:alice', client('alice')],
    ['Client:alice', client('alice')],
    ['client:alice?X-Foo=1&X-Bar=2', client('alice', { 'X-Foo': '1', 'X-Bar': '2' })],
    ['client:alice?X-Note=hello%20world', client('alice', { 'X-Note': 'hello world' })],
    ['client:bob.smith+ops', client('bob.smith+ops')],
  ])('%s', (to, expected) => {
    expect(parseCallTarget(to)).toEqual(expected);
  });

  it.each([
    ['client:', 'To: client: needs a name, e.g. client:alice'],
    ['client:?X-Foo=1', 'To: client: needs a name, e.g. client:alice'],
    ['client:al ice', 'To: client name must be an RFC 2396 userinfo of at most 128 characters'],
    ['client:a@b', 'To: client name must be an RFC 2396 userinfo of at most 128 characters'],
    [`client:${'a'.repeat(129)}`, 'To: client name must be an RFC 2396 userinfo of at most 128 characters'],
    ['client:alice?X-Foo', 'To: malformed client headers (header without "=")'],
    ['client:alice?', 'To: malformed client headers (empty headers part)'],
    ['client:alice?X:Foo=1', 'To: header name "X:Foo" is not a SIP token'],
    ['client:alice?X-Foo=a%0D%0AVia:%20evil', 'To: header "X-Foo" has control characters in its value'],
    ['sip:', 'To: malformed sip: URI (missing host)'],
    ['sip:bob@', 'To: malformed sip: URI (missing host)'],
    ['sip:bob@host:99999', 'To: malformed sip: URI (port must be 1 to 65535)'],
    ['sip:bob@exa mple.com', 'To: malformed sip: URI (invalid host)'],
    ['sip:bob@h?X-A=1%0A', 'To: header "X-A" has control characters in its value'],
    ['tel:+15551234567', 'To: tel: URIs are not accepted'],
    [
      'hello world',
      "To 'hello world' must be an E.164 number (+15551234567), digits, client:<name> or a sip: URI",
    ],
    ['', "To '' must be an E.164 number (+15551234567), digits, client:<name> or a sip: URI"],
    ['alice', "To 'alice' must be an E.164 number (+15551234567), digits, client:<name> or a sip: URI"],
    [
      '+1 (555) 123-4567',
      `To '+1 (555) 123-4567' is not a valid E.164 number ('+', a country code, at most 15 digits, no spaces)`,
    ],
    ['+0123', `To '+0123' is not a valid E.164 number ('+', a country code, at most 15 digits, no spaces)`],
    [
      '+1234567890123456',
      `To '+1234567890123456' is not a valid E.164 number ('+', a country code, at most 15 digits, no spaces)`,
    ],
    [
      ' 15551234567',
      "To ' 15551234567' is not a valid E.164 number; URL-encode '+' as %2B (curl --data-urlencode)",
    ],
  ])('rejects %j', (to, reason) => {
    const e = errorOf(() => parseCallTarget(to));
    expect(e).toBeInstanceOf(TargetError);
    expect((e as TargetError).reason).toEqual(reason);
  });

  it('keeps the SipUriError as the cause of a malformed sip: URI', () => {
    const e = errorOf(() => parseCallTarget('sip:a@b@c')) as TargetError;
    expect(e.cause).toMatchObject({ name: 'SipUriError', reason: 'more than one "@" (escape as %40)' });
  });
});

type Row = [string, PlanInput, Partial<OutgoingRequestPlan>];

describe('planOutgoingRequest', () => {
  describe('without multi-provider proxies (rules 2 and 7)', () => {
    it.each<Row>([
      [
        'number via the default proxy, its parameters carried',
        { target: num('+15551234567'), defaultProxy: 'sip:10.0.0.1:5060;transport=udp' },
        { requestUri: 'sip:+15551234567@10.0.0.1:5060;transport=udp', route: [], headers: {} },
      ],
      [
        'number via a default proxy with user, password and lr: only host, port and params kept',
        { target: num('911'), defaultProxy: 'sip:platform:pw@sbc.example.net;lr?X-Ignored=1' },
        { requestUri: 'sip:911@sbc.example.net', route: [] },
      ],
      [
        'number via an IPv6 default proxy',
        { target: num('+15551234567'), defaultProxy: 'sip:[2001:db8::5]:5060' },
        { requestUri: 'sip:+15551234567@[2001:db8::5]:5060' },
      ],
      [
        'sip target direct, URI headers become SIP headers',
        { target: sip('sip:bob@example.com:5070;transport=tcp?X-Foo=1&Subject=hi%20there') },
        {
          requestUri: 'sip:bob@example.com:5070;transport=tcp',
          route: [],
          headers: { 'X-Foo': '1', Subject: 'hi there' },
        },
      ],
      [
        'sip target ignores the default proxy',
        { target: sip('sip:bob@[2001:db8::1]:5080'), defaultProxy: 'sip:10.0.0.1' },
        { requestUri: 'sip:bob@[2001:db8::1]:5080', route: [] },
      ],
      [
        'client target to its first contact, with its headers',
        {
          target: client('alice', { 'X-Foo': '1' }),
          clientContacts: [ALICE_CONTACT, 'sip:alice@192.0.2.11'],
        },
        { requestUri: ALICE_CONTACT, route: [], headers: { 'X-Foo': '1' } },
      ],
      [
        'client contact headers are dropped',
        { target: client('alice'), clientContacts: ['sip:alice@192.0.2.10?X-Reg=1'] },
        { requestUri: 'sip:alice@192.0.2.10', headers: {} },
      ],
      [
        'an empty outbound-voice proxy list counts as none',
        { target: sip('sip:bob@example.com'), multiProvider: { 'outbound-voice': [{ proxy: [] }] } },
        { requestUri: 'sip:bob@example.com', route: [] },
      ],
      [
        'outbound-sms only counts as none',
        {
          target: sip('sip:bob@example.com'),
          multiProvider: { 'outbound-sms': [{ destination_network_id: 7 }] },
        },
        { requestUri: 'sip:bob@example.com', route: [] },
      ],
    ])('%s', (_, input, expected) => {
      const plan = planOutgoingRequest(input);
      expect(plan).toMatchObject(expected);
      expect(plan.proxyIndex).toBeUndefined();
      expect(plan.credentials).toBeUndefined();
    });
  });

  describe('multi-provider proxies (rules 4 and 5)', () => {
    it.each<Row>([
      [
        'number, default match .*: rewritten to the proxy with its inline parameters',
        { target: num('+1555'), multiProvider: mp({ uri: 'sip:gw.example.com:5080;transport=tcp' }) },
        { requestUri: 'sip:+1555@gw.example.com:5080;transport=tcp', route: [], proxyIndex: 0 },
      ],
      [
        'inline parameters carried, lr dropped from the Request-URI',
        { target: num('+1555'), multiProvider: mp({ uri: 'sip:gw.example.com;transport=tcp;foo=bar;lr' }) },
        { requestUri: 'sip:+1555@gw.example.com;transport=tcp;foo=bar', route: [] },
      ],
      [
        'sips proxy makes a sips Request-URI',
        { target: num('+1555'), multiProvider: mp({ uri: 'sips:gw.example.com' }) },
        { requestUri: 'sips:+1555@gw.example.com' },
      ],
      [
        'sip target matched: user kept, host/port/params replaced by the proxy',
        {
          target: sip('sip:bob@pbx.customer.com:5070;transport=udp;user=phone'),
          multiProvider: mp({ uri: 'sip:gw.example.com:5080;transport=tcp' }),
        },
        { requestUri: 'sip:bob@gw.example.com:5080;transport=tcp', route: [], proxyIndex: 0 },
      ],
      [
        'sip target without user, matched',
        { target: sip('sip:pbx.customer.com'), multiProvider: mp({ uri: 'sip:gw.example.com' }) },
        { requestUri: 'sip:gw.example.com' },
      ],
      [
        'client target matched (behaviour 2: client calls go through the proxy too)',
        {
          target: client('alice'),
          clientContacts: [ALICE_CONTACT],
          multiProvider: mp({ uri: 'sip:gw.example.com' }),
        },
        { requestUri: 'sip:alice@gw.example.com', route: [], proxyIndex: 0 },
      ],
      [
        'no match: R-URI unchanged, first proxy preloaded as a loose route',
        {
          target: sip('sip:bob@example.com'),
          multiProvider: mp({ uri: 'sip:gw.example.com:5080;transport=tcp', match: 'nomatch' }),
        },
        {
          requestUri: 'sip:bob@example.com',
          route: ['sip:gw.example.com:5080;transport=tcp;lr'],
          proxyIndex: 0,
        },
      ],
      [
        'no match, proxy URI already loose-routing: lr not doubled, headers and password dropped',
        {
          target: sip('sip:bob@example.com'),
          multiProvider: mp({ uri: 'sip:acct:pw@gw.example.com;lr;transport=tcp?X-A=1', match: '^x' }),
        },
        { route: ['sip:acct@gw.example.com;lr;transport=tcp'] },
      ],
      [
        'no match for a client: the contact goes through the first proxy',
        {
          target: client('alice'),
          clientContacts: [ALICE_CONTACT],
          multiProvider: mp({ uri: 'sip:gw.example.com', match: '^sip:\\+' }),
        },
        { requestUri: ALICE_CONTACT, route: ['sip:gw.example.com;lr'], proxyIndex: 0 },
      ],
      [
        'number without default proxy: initial R-URI on the first proxy, then first match wins',
        {
          target: num('+447700900123'),
          multiProvider: mp(
            { uri: 'sip:us.example.com', match: '^sip:\\+1' },
            { uri: 'sip:uk.example.com', match: '^sip:\\+44.*' },
          ),
        },
        { requestUri: 'sip:+447700900123@uk.example.com', route: [], proxyIndex: 1 },
      ],
      [
        'number with default proxy: matched against the default-proxy R-URI',
        {
          target: num('+15551234567'),
          defaultProxy: 'sip:sbc.internal:5060',
          multiProvider: mp({ uri: 'sip:a.example.com', match: '@sbc\\.internal' }),
        },
        { requestUri: 'sip:+15551234567@a.example.com', proxyIndex: 0 },
      ],
      [
        'number with default proxy and no match: routed through the first proxy',
        {
          target: num('+15551234567'),
          defaultProxy: 'sip:sbc.internal:5060',
          multiProvider: mp({ uri: 'sip:a.example.com', match: '^sip:\\+44' }),
        },
        { requestUri: 'sip:+15551234567@sbc.internal:5060', route: ['sip:a.example.com;lr'], proxyIndex: 0 },
      ],
      [
        'number without default proxy and no match: R-URI on the first proxy, routed through it',
        {
          target: num('+15551234567'),
          multiProvider: mp({ uri: 'sip:a.example.com:5080', match: '^sip:\\+44' }),
        },
        {
          requestUri: 'sip:+15551234567@a.example.com:5080',
          route: ['sip:a.example.com:5080;lr'],
          proxyIndex: 0,
        },
      ],
      [
        'multiple proxies, first match wins even when a later one matches too',
        {
          target: num('+447700900123'),
          multiProvider: mp(
            { uri: 'sip:p0.example.com', match: '^sip:\\+1' },
            { uri: 'sip:p1.example.com', match: '\\+44' },
            { uri: 'sip:p2.example.com' },
          ),
        },
        { requestUri: 'sip:+447700900123@p1.example.com', proxyIndex: 1 },
      ],
      [
        'a later proxy with default match catches what earlier ones do not',
        {
          target: num('+33123456789'),
          multiProvider: mp({ uri: 'sip:p0.example.com', match: '^sip:\\+1' }, { uri: 'sip:p1.example.com' }),
        },
        { requestUri: 'sip:+33123456789@p1.example.com', proxyIndex: 1 },
      ],
      [
        'unanchored pattern matches anywhere (spec: `uri.com` matches that URI)',
        {
          target: sip('sip:bob@uri.com'),
          multiProvider: mp({ uri: 'sip:gw.example.com', match: 'uri.com' }),
        },
        { requestUri: 'sip:bob@gw.example.com' },
      ],
      [
        'anchored pattern (spec: `^uri.*` matches URIs starting with uri) does not match mid-string',
        { target: sip('sip:bob@uri.com'), multiProvider: mp({ uri: 'sip:gw.example.com', match: '^uri.*' }) },
        { requestUri: 'sip:bob@uri.com', route: ['sip:gw.example.com;lr'] },
      ],
      [
        'matched against the R-URI without the target URI headers',
        {
          target: sip('sip:bob@h.com?X-Tag=vip'),
          multiProvider: mp({ uri: 'sip:gw.example.com', match: 'vip' }),
        },
        { requestUri: 'sip:bob@h.com', route: ['sip:gw.example.com;lr'] },
      ],
      [
        'IPv6 proxy host',
        { target: num('+1555'), multiProvider: mp({ uri: 'sip:[2001:db8::10]:5080;transport=tcp' }) },
        { requestUri: 'sip:+1555@[2001:db8::10]:5080;transport=tcp' },
      ],
      [
        'IPv6 target matched by a pattern on its host',
        {
          target: sip('sip:bob@[2001:db8::1]'),
          multiProvider: mp({ uri: 'sip:gw.example.com', match: '\\[2001:db8::1\\]' }),
        },
        { requestUri: 'sip:bob@gw.example.com' },
      ],
      [
        'IPv6 proxy as outbound proxy',
        { target: sip('sip:bob@example.com'), multiProvider: mp({ uri: 'sip:[::1]:5060', match: '^$' }) },
        { route: ['sip:[::1]:5060;lr'] },
      ],
    ])('%s', (_, input, expected) => {
      expect(planOutgoingRequest(input)).toMatchObject(expected);
    });

    it.each<[string, OutboundProxy[], OutgoingRequestPlan['credentials']]>([
      [
        'username and password',
        [{ uri: 'sip:gw.example.com', username: 'acct', password: 's3cret' }],
        { username: 'acct', password: 's3cret' },
      ],
      [
        'username alone: empty password',
        [{ uri: 'sip:gw.example.com', username: 'acct' }],
        { username: 'acct', password: '' },
      ],
      ['password alone: none', [{ uri: 'sip:gw.example.com', password: 'x' }], undefined],
      ['none', [{ uri: 'sip:gw.example.com' }], undefined],
      [
        'from the matched proxy',
        [
          { uri: 'sip:p0.example.com', username: 'u0', password: 'p0', match: '^sip:\\+1' },
          { uri: 'sip:p1.example.com', username: 'u1', password: 'p1' },
        ],
        { username: 'u1', password: 'p1' },
      ],
      [
        'from the first proxy when none matches',
        [
          { uri: 'sip:p0.example.com', username: 'u0', password: 'p0', match: '^sip:\\+1' },
          { uri: 'sip:p1.example.com', username: 'u1', password: 'p1', match: '^sip:\\+1' },
        ],
        { username: 'u0', password: 'p0' },
      ],
    ])('credentials: %s', (_, proxies, credentials) => {
      expect(
        planOutgoingRequest({ target: num('+4420'), multiProvider: mp(...proxies) }).credentials,
      ).toEqual(credentials);
    });
  });

  describe('headers (rules 3 and 6)', () => {
    const pcharge = { headerName: 'P-Charge-Info', key: 'npi', value: 'ISDN' };
    it.each<[string, Omit<PlanInput, 'multiProvider'>, OutboundProxy, Partial<OutgoingRequestPlan>]>([
      [
        'proxy header added when absent',
        { target: num('+1555') },
        { uri: 'sip:gw.example.com', headers: [pcharge] },
        { headers: { 'P-Charge-Info': 'npi=ISDN' } },
      ],
      [
        'proxy header parameter appended to a caller header, name matched case-insensitively',
        { target: sip('sip:bob@h.com?p-charge-info=%3Csip:+1555%40h%3E') },
        { uri: 'sip:gw.example.com', headers: [pcharge] },
        { headers: { 'p-charge-info': '<sip:+1555@h>;npi=ISDN' } },
      ],
      [
        'several parameters on one header accumulate in order',
        { target: client('alice', { 'X-Acct': 'a1' }), clientContacts: [ALICE_CONTACT] },
        {
          uri: 'sip:gw.example.com',
          headers: [
            { headerName: 'X-Acct', key: 'k1', value: 'v1' },
            { headerName: 'x-acct', key: 'k2', value: 'v 2' },
            { headerName: 'X-New', key: 'k3', value: 'v3' },
            { headerName: 'X-New', key: 'k4', value: 'v4' },
          ],
        },
        { headers: { 'X-Acct': 'a1;k1=v1;k2="v 2"', 'X-New': 'k3=v3;k4=v4' } },
      ],
      [
        'From, To and Contact parameters go to headerParams for the stack',
        { target: num('+1555') },
        {
          uri: 'sip:gw.example.com',
          headers: [
            { headerName: 'To', key: 'npi', value: 'ISDN' },
            { headerName: 'from', key: 'cpc', value: 'ordinary' },
            { headerName: 'Contact', key: 'x', value: 'a b' },
          ],
        },
        {
          headers: {},
          headerParams: [
            { headerName: 'To', param: 'npi=ISDN' },
            { headerName: 'from', param: 'cpc=ordinary' },
            { headerName: 'Contact', param: 'x="a b"' },
          ],
        },
      ],
      [
        'parameters for other stack-owned headers are dropped',
        { target: num('+1555') },
        { uri: 'sip:gw.example.com', headers: [{ headerName: 'Via', key: 'x', value: 'y' }] },
        { headers: {}, headerParams: [] },
      ],
      [
        'headers of the proxy used only (no match: the first proxy)',
        { target: num('+1555') },
        { uri: 'sip:gw.example.com', match: '^x', headers: [pcharge] },
        { route: ['sip:gw.example.com;lr'], headers: { 'P-Charge-Info': 'npi=ISDN' } },
      ],
    ])('%s', (_, input, proxy, expected) => {
      expect(planOutgoingRequest({ ...input, multiProvider: mp(proxy) })).toMatchObject(expected);
    });

    it('uses the headers of the matched proxy, not of earlier ones', () => {
      const plan = planOutgoingRequest({
        target: num('+4420'),
        multiProvider: mp(
          {
            uri: 'sip:p0.example.com',
            match: '^sip:\\+1',
            headers: [{ headerName: 'X-P', key: 'p', value: '0' }],
          },
          { uri: 'sip:p1.example.com', headers: [{ headerName: 'X-P', key: 'p', value: '1' }] },
        ),
      });
      expect(plan.headers).toEqual({ 'X-P': 'p=1' });
    });

    it('merges input.headers first; the target headers win a clash', () => {
      const plan = planOutgoingRequest({
        target: client('alice', { 'x-foo': 'from-target' }),
        clientContacts: [ALICE_CONTACT],
        headers: { 'X-Foo': 'from-caller', 'X-Other': '1' },
      });
      expect(plan.headers).toEqual({ 'X-Foo': 'from-target', 'X-Other': '1' });
    });

    it('ignores every stack-owned or forbidden header from targets and callers', () => {
      const forbidden = [
        'Call-ID',
        'CSeq',
        'Via',
        'From',
        'To',
        'Contact',
        'Max-Forwards',
        'Route',
        'Record-Route',
        'Content-Length',
        'i',
        'v',
        'f',
        't',
        'm',
        'l',
        'Content-Type',
        'c',
        'body',
        'Authorization',
        'Proxy-Authorization',
      ];
      for (const name of forbidden) expect(IGNORED_TARGET_HEADERS.has(name.toLowerCase())).toBe(true);
      const query = forbidden.map((h) => `${h}=x`).join('&');
      const viaSip = planOutgoingRequest({ target: sip(`sip:bob@h.com?${query}&X-Kept=1`) });
      expect(viaSip.headers).toEqual({ 'X-Kept': '1' });
      const viaClient = planOutgoingRequest({
        target: parseCallTarget(`client:alice?${query}&X-Kept=1`),
        clientContacts: [ALICE_CONTACT],
        headers: { 'call-id': 'x', CSEQ: '1 INVITE' },
      });
      expect(viaClient.headers).toEqual({ 'X-Kept': '1' });
    });

    it('rejects header injection in caller headers', () => {
      const e = errorOf(() =>
        planOutgoingRequest({
          target: client('alice', { 'X-A': 'a\r\nVia: evil' }),
          clientContacts: [ALICE_CONTACT],
        }),
      );
      expect(e).toBeInstanceOf(TargetError);
      expect(
        errorOf(() =>
          planOutgoingRequest({ target: num('+1'), defaultProxy: 'sip:h', headers: { 'X A': '1' } }),
        ),
      ).toBeInstanceOf(TargetError);
    });
  });

  describe('errors', () => {
    it.each<[string, PlanInput, NoRouteReason, string]>([
      [
        'number without any proxy',
        { target: num('+15551234567') },
        NoRouteReason.NoOutboundRoute,
        'no outbound route for number',
      ],
      [
        'number with multiProvider null',
        { target: num('+15551234567'), multiProvider: null },
        NoRouteReason.NoOutboundRoute,
        'no outbound route for number',
      ],
      [
        'client without contacts',
        { target: client('alice') },
        NoRouteReason.ClientNotRegistered,
        'client not registered',
      ],
      [
        'client with an empty contact list',
        { target: client('alice'), clientContacts: [] },
        NoRouteReason.ClientNotRegistered,
        'client not registered',
      ],
      [
        'client with a broken contact',
        { target: client('alice'), clientContacts: ['alice@1.2.3.4'] },
        NoRouteReason.InvalidContact,
        'client contact: missing scheme',
      ],
      [
        'client with a tel contact',
        { target: client('alice'), clientContacts: ['tel:+1555'] },
        NoRouteReason.InvalidContact,
        'client contact: not a sip: URI',
      ],
      [
        'invalid default proxy',
        { target: num('+1555'), defaultProxy: '10.0.0.1:5060' },
        NoRouteReason.InvalidProxy,
        'default proxy: missing scheme',
      ],
      [
        'invalid proxy uri when used',
        { target: num('+1555'), multiProvider: mp({ uri: 'gw.example.com' }) },
        NoRouteReason.InvalidProxy,
        'proxy[0].uri: missing scheme',
      ],
      [
        'tel proxy uri',
        { target: sip('sip:b@h.com'), multiProvider: mp({ uri: 'tel:+1555' }) },
        NoRouteReason.InvalidProxy,
        'proxy[0].uri: not a sip: URI',
      ],
      [
        'invalid match pattern',
        { target: sip('sip:b@h.com'), multiProvider: mp({ uri: 'sip:gw.example.com', match: '(' }) },
        NoRouteReason.InvalidProxy,
        'proxy[0].match is not a valid pattern',
      ],
      [
        'match pattern with a lookahead (RE2 has none; stored before write-time checks)',
        { target: sip('sip:b@h.com'), multiProvider: mp({ uri: 'sip:gw.example.com', match: 'b(?=@)' }) },
        NoRouteReason.InvalidProxy,
        'proxy[0].match is not a valid pattern',
      ],
      [
        'proxy header with a bad name',
        {
          target: sip('sip:b@h.com'),
          multiProvider: mp({ uri: 'sip:gw', headers: [{ headerName: 'X Y', key: 'k', value: 'v' }] }),
        },
        NoRouteReason.InvalidProxy,
        'proxy[0].headers[0]: headerName and key must be SIP tokens',
      ],
      [
        'proxy header value with a line break',
        {
          target: sip('sip:b@h.com'),
          multiProvider: mp({ uri: 'sip:gw', headers: [{ headerName: 'X-Y', key: 'k', value: 'a\r\nb' }] }),
        },
        NoRouteReason.InvalidProxy,
        'proxy[0].headers[0]: value has control characters',
      ],
    ])('%s', (_, input, reason, message) => {
      const e = errorOf(() => planOutgoingRequest(input));
      expect(e).toBeInstanceOf(NoRouteError);
      expect(e).toMatchObject({ reason, message });
    });

    it('does not parse proxies it does not use', () => {
      const plan = planOutgoingRequest({
        target: num('+1555'),
        multiProvider: mp({ uri: 'sip:gw.example.com' }, { uri: 'not a uri', match: '(' }),
      });
      expect(plan.requestUri).toBe('sip:+1555@gw.example.com');
    });

    it.each<[string, CallTarget]>([
      ['a malformed sip target', sip('sip:bob@')],
      ['a tel URI as sip target', sip('tel:+1555')],
      ['a bad number', num('12ab')],
      ['an empty client name', client('')],
    ])('rejects %s built without parseCallTarget', (_, target) => {
      expect(
        errorOf(() =>
          planOutgoingRequest({ target, defaultProxy: 'sip:h', clientContacts: [ALICE_CONTACT] }),
        ),
      ).toBeInstanceOf(TargetError);
    });
  });

  it('plans every To form end to end from parseCallTarget', () => {
    const multiProvider = mp(
      { uri: 'sip:uk.example.com;transport=tcp', match: '^sip:\\+44', username: 'uk', password: 'pw' },
      { uri: 'sip:edge.example.com:5080', match: '^sip:\\+1' },
    );
    const plan = (to: string, contacts?: string[]) =>
      planOutgoingRequest({
        target: parseCallTarget(to),
        clientContacts: contacts,
        defaultProxy: 'sip:sbc.internal',
        multiProvider,
      });
    expect(plan('+447700900123')).toEqual({
      requestUri: 'sip:+447700900123@uk.example.com;transport=tcp',
      route: [],
      headers: {},
      headerParams: [],
      credentials: { username: 'uk', password: 'pw' },
      proxyIndex: 0,
    });
    expect(plan('+15551234567')).toEqual({
      requestUri: 'sip:+15551234567@edge.example.com:5080',
      route: [],
      headers: {},
      headerParams: [],
      proxyIndex: 1,
    });
    expect(plan('sip:bob@example.com?X-Foo=1')).toEqual({
      requestUri: 'sip:bob@example.com',
      route: ['sip:uk.example.com;transport=tcp;lr'],
      headers: { 'X-Foo': '1' },
      headerParams: [],
      credentials: { username: 'uk', password: 'pw' },
      proxyIndex: 0,
    });
    expect(plan('client:alice?X-Bar=2', [ALICE_CONTACT])).toMatchObject({
      requestUri: ALICE_CONTACT,
      route: ['sip:uk.example.com;transport=tcp;lr'],
      headers: { 'X-Bar': '2' },
    });
  });

  describe('tenant match patterns run in linear time', () => {
    it('(a+)+X against 30 a: routed at once, the event loop never stalls', async () => {
      // The histogram's own 10 ms timer must keep firing; a backtracking engine holds the thread
      // for minutes on this input, which shows as its maximum delay.
      const delay = monitorEventLoopDelay({ resolution: 10 });
      delay.enable();
      const multiProvider = mp({ uri: 'sip:gw.example.com;transport=tcp', match: '(a+)+X' });
      const slow = planOutgoingRequest({ target: sip(`sip:${'a'.repeat(30)}@example.com`), multiProvider });
      const hit = planOutgoingRequest({ target: sip('sip:aaaX@example.com'), multiProvider });
      await new Promise((r) => setTimeout(r, 50));
      delay.disable();
      expect(slow).toMatchObject({
        requestUri: `sip:${'a'.repeat(30)}@example.com`,
        route: ['sip:gw.example.com;transport=tcp;lr'],
        proxyIndex: 0,
      });
      expect(hit).toMatchObject({ requestUri: 'sip:aaaX@gw.example.com;transport=tcp', route: [] });
      expect(delay.max).toBeLessThan(1e9);
    });
  });
});
