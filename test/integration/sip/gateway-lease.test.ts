/**
 * One registration per gateway across nodes: of two nodes on one Redis, only the lease holder
 * REGISTERs a gateway; when it stops (SIGTERM-like close) it un-REGISTERs and the other node
 * registers within a third of the lease; when it dies (SIGKILL) the other registers once the lease
 * runs out. The registrar is a small UDP peer that records who REGISTERed, from which Contact.
 */
import type { ChildProcess } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNamespace, type TestNamespace } from '../../support/namespace.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, API, startTestServer, type TestServer } from '../../support/server.js';
import { startServerProcess } from '../../support/server-process.js';
import { until } from '../../support/until.js';

const LEASE_MS = 1500;

interface Registration {
  readonly contactPort: number;
  readonly expires: number;
  readonly at: number;
}

/** A registrar that grants what is asked and remembers each REGISTER's Contact port and expiry. */
class Registrar {
  readonly seen: Registration[] = [];
  private constructor(
    private readonly socket: Socket,
    readonly port: number,
  ) {}

  static async open(): Promise<Registrar> {
    const socket = createSocket('udp4');
    await new Promise<void>((r) => socket.bind(0, '127.0.0.3', () => r()));
    const registrar = new Registrar(socket, socket.address().port);
    socket.on('message', (m, rinfo) => registrar.answer(m.toString('latin1'), rinfo.port, rinfo.address));
    return registrar;
  }

  private answer(text: string, port: number, address: string): void {
    if (!text.startsWith('REGISTER ')) return;
    const head = text.slice(0, text.indexOf('\r\n\r\n')).split('\r\n');
    const header = (re: RegExp) => head.filter((l) => re.test(l));
    const contact = header(/^(?:Contact|m)[ \t]*:/i)[0] ?? '';
    const expires = Number(
      /^(?:Expires)[ \t]*:[ \t]*(\d+)/im.exec(text)?.[1] ?? /expires=(\d+)/i.exec(contact)?.[1],
    );
    const contactPort = Number(/@[^:;>]+:(\d+)/.exec(contact)?.[1]);
    this.seen.push({ contactPort, expires, at: Date.now() });
    const to = (header(/^(?:To|t)[ \t]*:/i)[0] ?? '').replace(/;tag=[^;]*/, '');
    const reply = [
      'SIP/2.0 200 OK',
      ...header(/^(?:Via|v)[ \t]*:/i),
      ...header(/^(?:From|f)[ \t]*:/i),
      `${to};tag=reg1`,
      ...header(/^(?:Call-ID|i)[ \t]*:/i),
      ...header(/^CSeq[ \t]*:/i),
      `${contact.replace(/;expires=\d+/i, '')};expires=${expires}`,
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n');
    this.socket.send(Buffer.from(reply, 'latin1'), port, address);
  }

  /** Ports of the Contacts that registered (expires > 0) since `since`. */
  registeredFrom(since: number): Set<number> {
    return new Set(this.seen.filter((r) => r.at >= since && r.expires > 0).map((r) => r.contactPort));
  }

  close(): void {
    this.socket.close();
  }
}

let ns: TestNamespace;
let registrar: Registrar;
let nodes: TestServer[] = [];
let child: ChildProcess | null = null;
const env = { GATEWAY_LEASE_MS: String(LEASE_MS) };

beforeAll(async () => {
  ns = await createNamespace('gwlease');
  registrar = await Registrar.open();
});
afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const n of nodes) await n.stop();
  await ns?.dispose();
  registrar?.close();
});

async function createGateway(base: string, auth: string, adminSid: string): Promise<string> {
  const r = await fetch(`${base}${API}/Accounts/${adminSid}/Management/Gateways.json`, {
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      Proxy: `127.0.0.3:${registrar.port}`,
      Register: 'true',
      TTL: '3600',
    }).toString(),
  });
  expect(r.status).toBe(201);
  return ((await r.json()) as { sid: string }).sid;
}

const basic = (user: string, secret: string) =>
  `Basic ${Buffer.from(`${user}:${secret}`).toString('base64')}`;
const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('gateway registration lease', () => {
  it('only the holder registers; a stopping holder un-REGISTERs and the other node takes over', async () => {
    const a = await startTestServer({ ns, env });
    const b = await startTestServer({ ns, env });
    nodes = [a, b];
    const start = Date.now();
    const sid = await createGateway(a.url, basic(ADMIN_EMAIL, ADMIN_PASSWORD), a.admin.sid);
    await until(
      async () => registrar.registeredFrom(start).size,
      (n) => n > 0,
      5000,
    );
    // Two sweeps later still exactly one node holds it, and only its Contact registered.
    await settle(LEASE_MS);
    const holders = nodes.filter((n) => n.server.sip!.gateways.holds(sid));
    expect(holders).toHaveLength(1);
    const holder = holders[0]!;
    const other = holder === a ? b : a;
    expect([...registrar.registeredFrom(start)]).toEqual([holder.server.sip!.bound!.udp]);

    const stopped = Date.now();
    await holder.stop();
    nodes = [other];
    // The holder's un-REGISTER, then the other node's REGISTER within a third of the lease (+ slack).
    expect(registrar.seen.some((r) => r.at >= stopped && r.expires === 0)).toBe(true);
    const taken = await until(
      async () => registrar.registeredFrom(stopped),
      (ports) => ports.has(other.server.sip!.bound!.udp!),
      LEASE_MS / 3 + 2000,
    );
    expect([...taken]).toEqual([other.server.sip!.bound!.udp]);
    expect(other.server.sip!.gateways.holds(sid)).toBe(true);
    await other.stop();
    nodes = [];
  });

  it('a holder that dies loses the gateway when its lease runs out', async () => {
    const a = await startServerProcess(ns, {
      entry: 'src',
      admin: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
      host: '127.0.0.1',
      env,
    });
    child = a.child;
    const start = Date.now();
    const sid = await createGateway(a.base, basic(ADMIN_EMAIL, ADMIN_PASSWORD), a.admin.sid);
    await until(
      async () => registrar.registeredFrom(start),
      (ports) => ports.has(a.sipPort!),
      5000,
    );
    const b = await startTestServer({ ns, env });
    nodes = [b];
    await settle(LEASE_MS);
    expect(b.server.sip!.gateways.holds(sid)).toBe(false);

    child.kill('SIGKILL');
    await once(child, 'exit');
    const killed = Date.now();
    await until(
      async () => registrar.registeredFrom(killed),
      (ports) => ports.has(b.server.sip!.bound!.udp!),
      LEASE_MS + LEASE_MS / 3 + 2000,
    );
    // Nothing un-REGISTERed the dead node's binding: only the new holder registered since.
    expect([...registrar.registeredFrom(killed)]).toEqual([b.server.sip!.bound!.udp]);
  });
});
