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

/** A port free for both UDP and TCP on `ip`. */
export async function freePort(ip = '127.0.0.2'): Promise<number> {
  for (let i = 0; i < 20; i++) {
    const port = await new Promise<number>((res, rej) => {
      const s = createSocket('udp4');
      s.once('error', rej);
      s.bind(0, ip, () => {
        const p = s.address().port;
        s.close(() => res(p));
      });
    });
    if (await isFree(ip, port)) return port;
  }
  throw new Error('no free port');
}

/** `n` consecutive ports free for UDP and TCP on `ip` (random base, bounded tries). */
export async function freePortBlock(ip: string, n: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 40_000 + Math.floor(Math.random() * 20_000);
    let ok = true;
    for (let p = base; p < base + n && ok; p++) ok = await isFree(ip, p);
    if (ok) return base;
  }
  throw new Error('no free port block');
}
