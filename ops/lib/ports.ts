/**
 * Free loopback ports for peers, benchmarks and child servers. A port is taken only when it is free
 * for both UDP and TCP, because SIP listens on both.
 */
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';

/** Whether `port` is free for both UDP and TCP on `ip`. */
export async function isFree(ip: string, port: number): Promise<boolean> {
  const udp = await new Promise<boolean>((res) => {
    const s = createSocket('udp4');
    s.once('error', () => res(false));
    s.bind(port, ip, () => s.close(() => res(true)));
  });
  if (!udp) return false;
  return new Promise<boolean>((res) => {
    const srv = createServer();
    srv.once('error', () => res(false));
    srv.listen(port, ip, () => srv.close(() => res(true)));
  });
}

/**
 * Ports are picked in 10000–19999: below Linux's ephemeral range (32768–60999) and the media
 * engines' RTP range (20000–29999). A port the kernel may hand out on its own (another process's
 * outgoing connection or port-0 socket) can be taken between the check here and the bind, which
 * for a server process comes seconds later (its start-up): the bind then fails with EADDRINUSE.
 */
const PICK_MIN = 10_000;
const PICK_SPAN = 10_000;
/** Ports this process handed out lately: two picks before either is bound must differ. */
const handedOut = new Set<number>();
const HANDED_OUT_KEPT = 1000;

function pick(port: number): number {
  handedOut.add(port);
  if (handedOut.size > HANDED_OUT_KEPT) handedOut.delete(handedOut.values().next().value as number);
  return port;
}

/** A port free for both UDP and TCP on `ip`. */
export async function freePort(ip = '127.0.0.2'): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const port = PICK_MIN + Math.floor(Math.random() * PICK_SPAN);
    if (!handedOut.has(port) && (await isFree(ip, port))) return pick(port);
  }
  throw new Error('no free port');
}

/** `n` consecutive ports free for UDP and TCP on `ip` (random base, bounded tries). */
export async function freePortBlock(ip: string, n: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = PICK_MIN + Math.floor(Math.random() * (PICK_SPAN - n));
    let ok = true;
    for (let p = base; p < base + n && ok; p++) ok = !handedOut.has(p) && (await isFree(ip, p));
    if (ok) {
      for (let p = base; p < base + n; p++) pick(p);
      return base;
    }
  }
  throw new Error('no free port block');
}
