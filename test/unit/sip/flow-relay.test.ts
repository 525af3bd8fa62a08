/**
 * Flow tokens and the flow router: a token names its connection and verifies only with the shared
 * secret; a flow another node holds gets a flow-token Route to that node (once), UDP flows and our
 * own flows none; a request is claimed when its top Route carries a token.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { Flow } from '../../../src/sip/flow.js';
import { FLOW_PARAM, FlowRelay, FlowTokens } from '../../../src/sip/flow-relay.js';
import { type SipRequest, sipUriOf } from '../../../src/sip/message.js';
import { SipStack } from '../../../src/sip/stack.js';

const tokens = (secret = 'shared-secret') => new FlowTokens(async () => secret);
const ref = { protocol: 'TCP', address: '192.0.2.10', port: 40123 } as const;

function relayAt(port: number): FlowRelay {
  const options = { host: '127.0.0.1', port, publicAddress: '127.0.0.1', udp: true, tcp: true, wsPort: null };
  const log = pino({ level: 'silent' });
  return new FlowRelay(new SipStack(options, log), tokens(), log, ['127.0.0.1']);
}

const flow = (
  node: { address: string; port: number } | undefined,
  protocol: Flow['protocol'] = 'TCP',
): Flow => ({
  protocol,
  address: '192.0.2.10',
  port: 40123,
  local: { address: '127.0.0.1', port: node?.port ?? 5080 },
  ...(node ? { node } : {}),
});

const invite = (route?: string[]): SipRequest =>
  ({
    method: 'INVITE',
    uri: 'sip:carol@192.0.2.10:40123;transport=tcp',
    version: '2.0',
    headers: {
      via: [],
      to: { uri: 'sip:carol@example.test', params: {} },
      from: { uri: 'sip:alice@example.test', params: { tag: 'f' } },
      'call-id': 'c1',
      cseq: { seq: 1, method: 'INVITE' },
      ...(route ? { route: route.map((uri) => ({ uri, params: {} })) } : {}),
    },
  }) as SipRequest;

describe('FlowTokens', () => {
  it('round-trips a flow, URI-safe, and refuses tampering or another secret', async () => {
    const t = tokens();
    const token = await t.sign(ref);
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(await t.verify(token)).toEqual(ref);
    const [body, sig] = token.split('.') as [string, string];
    const other = await t.sign({ ...ref, port: 1 });
    expect(await t.verify(`${other.split('.')[0]}.${sig}`)).toBeNull();
    expect(await t.verify(`${body}.${sig.slice(1)}`)).toBeNull();
    expect(await t.verify(`${body}`)).toBeNull();
    expect(await t.verify(`${token}.x`)).toBeNull();
    expect(await t.verify('')).toBeNull();
    expect(await tokens('another secret').verify(token)).toBeNull();
  });
});

describe('FlowRelay as the stack’s flow router', () => {
  it('counts our own flows, UDP flows and flows of unknown home as local', () => {
    const r = relayAt(5080);
    expect(r.isLocal(flow({ address: '127.0.0.1', port: 5080 }))).toBe(true);
    expect(r.isLocal(flow({ address: '127.0.0.1', port: 5081 }))).toBe(false);
    expect(r.isLocal(flow({ address: '192.0.2.99', port: 5080 }))).toBe(false);
    expect(r.isLocal(flow({ address: '127.0.0.1', port: 5081 }, 'UDP'))).toBe(true);
    // A binding written before nodes stamped theirs: a TCP flow's listener is its home.
    expect(r.isLocal(flow(undefined))).toBe(true);
    expect(r.isLocal({ ...flow(undefined), local: { address: '127.0.0.1', port: 5099 } })).toBe(false);
    expect(r.isLocal({ ...flow(undefined, 'WS'), local: { address: '127.0.0.1', port: 5099 } })).toBe(true);
  });

  it('puts one flow-token Route to the home node first, and none when the route set has one', async () => {
    const r = relayAt(5080);
    const rq = invite(['sip:proxy.example.test;lr']);
    await r.routeThrough(rq, flow({ address: '127.0.0.1', port: 5081 }));
    const [first, second] = rq.headers.route ?? [];
    const uri = sipUriOf(first?.uri);
    expect(uri).toMatchObject({ host: '127.0.0.1', port: 5081 });
    expect(uri?.params).toHaveProperty('lr');
    expect(await r.tokens.verify(uri?.params[FLOW_PARAM] ?? '')).toEqual(ref);
    expect(sipUriOf(second?.uri)?.host).toBe('proxy.example.test');
    expect(r.claims(rq)).toBe(true);
    await r.routeThrough(rq, flow({ address: '127.0.0.1', port: 5081 }));
    expect(rq.headers.route).toHaveLength(2);
    expect(r.claims(invite(['sip:proxy.example.test;lr']))).toBe(false);
    expect(r.claims(invite())).toBe(false);
  });
});
