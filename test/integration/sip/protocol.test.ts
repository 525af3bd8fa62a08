/**
 * Protocol basics and SIP over WebSocket (RFC 7118): OPTIONS is answered with
 * Allow (keep-alive), unknown methods get 501 with Allow, Max-Forwards 0 gets 483; a browser-style
 * client registers over WS with digest and a call to it goes back over its own connection.
 */
import { createSocket, type Socket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SipEvent } from '../../../src/sip/port.js';
import { API, startTestServer, type TestServer } from '../../support/server.js';
import { wsClient } from '../../support/sip-ws-client.js';

let ts: TestServer;
let udp: Socket;
const inbox: string[] = [];

beforeAll(async () => {
  ts = await startTestServer({ label: 'sipproto', env: { SIP_WS_PORT: '0' } });
  udp = createSocket('udp4');
  udp.on('message', (m) => inbox.push(m.toString('latin1')));
  await new Promise<void>((r) => udp.bind(0, '127.0.0.2', () => r()));
});
afterAll(async () => {
  udp?.close();
  await ts?.dispose();
});

let seq = 0;
function request(method: string, extra: string[] = [], transport = 'UDP', host = '127.0.0.2:5999'): string {
  seq++;
  const sipPort = ts.server.sip!.stack.port;
  return [
    `${method} sip:service@127.0.0.1:${sipPort} SIP/2.0`,
    `Via: SIP/2.0/${transport} ${host};branch=z9hG4bKproto${seq}`,
    'From: <sip:tester@example.test>;tag=t1',
    'To: <sip:service@127.0.0.1>',
    `Call-ID: proto-${seq}@example.test`,
    `CSeq: 1 ${method}`,
    ...extra,
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
}

async function udpExchange(text: string): Promise<string> {
  const branch = /branch=(\S+)/.exec(text)?.[1] as string;
  udp.send(Buffer.from(text, 'latin1'), ts.server.sip!.stack.port, '127.0.0.1');
  const end = Date.now() + 3000;
  while (Date.now() < end) {
    const final = inbox.find((m) => m.includes(branch) && /^SIP\/2\.0 [2-6]/.test(m));
    if (final) return final;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no final answer to ${text.split('\r\n')[0]}`);
}

describe('protocol basics over UDP', () => {
  it('OPTIONS → 200 with Allow', async () => {
    const rs = await udpExchange(request('OPTIONS', ['Max-Forwards: 70']));
    expect(rs).toMatch(/^SIP\/2\.0 200/);
    expect(rs).toMatch(/^Allow:.*INVITE.*REGISTER/im);
  });

  it('an unknown method → 501 with Allow', async () => {
    const rs = await udpExchange(request('PUBLISH', ['Max-Forwards: 70']));
    expect(rs).toMatch(/^SIP\/2\.0 501/);
    expect(rs).toMatch(/^Allow:/im);
    expect(rs).toMatch(/^To:.*;tag=/im);
  });

  it('Max-Forwards: 0 → 483', async () => {
    const rs = await udpExchange(request('OPTIONS', ['Max-Forwards: 0']));
    expect(rs).toMatch(/^SIP\/2\.0 483/);
  });
});

describe('SIP over WebSocket', () => {
  it('a WS client registers with digest and a call to it comes over its connection', async () => {
    const acct = await ts.request('POST', `${API}/Accounts.json`, {
      auth: ts.admin,
      form: { EmailAddress: 'ws@example.test', Password: 'password-123', Role: 'Developer' },
    });
    const creds = { user: acct.json.sid, secret: acct.json.auth_token };
    const c = await ts.request('POST', `${API}/Accounts/${acct.json.sid}/Clients.json`, {
      auth: creds,
      form: { Login: 'webby', Password: 'webby-secret-1' },
    });
    expect(c.status).toBe(201);

    const wsPort = ts.server.sip!.bound!.ws as number;
    const { ws, ok, next, answer } = await wsClient(wsPort, 'webby', 'webby-secret-1');
    expect(ws.protocol).toBe('sip');
    expect(ok).toMatch(/^SIP\/2\.0 200/);

    const domain = ts.server.config.organization.defaultDomain;
    const [binding] = await ts.server.sip!.registrar.locate('webby', domain);
    expect(binding?.flow.protocol).toBe('WS');

    // A call to the client reaches it over the WebSocket it registered on.
    const events: SipEvent[] = [];
    const unsubscribe = ts.server.sip!.legs.onEvent((e) => events.push(e));
    ts.server.sip!.legs.placeCall('CA-ws-1', {
      requestUri: binding!.contact,
      from: { uri: 'sip:+15550001111@127.0.0.1' },
      to: { uri: 'sip:webby@127.0.0.1' },
      flow: binding!.flow,
    });
    const invite = await next((m) => m.startsWith('INVITE '));
    expect(invite).toMatch(/^Via: SIP\/2\.0\/WS /im);
    // The client rejects it; exactly one terminal event comes back.
    answer(invite, '486 Busy Here');
    const end = Date.now() + 3000;
    while (Date.now() < end && !events.some((e) => e.type === 'sip.failed'))
      await new Promise((r) => setTimeout(r, 10));
    expect(events.filter((e) => 'legId' in e && e.legId === 'CA-ws-1' && e.type === 'sip.failed')).toEqual([
      expect.objectContaining({ status: 486 }),
    ]);
    expect(await next((m) => m.startsWith('ACK '))).toMatch(/^ACK /);
    unsubscribe();
    ws.close();
  });
});
