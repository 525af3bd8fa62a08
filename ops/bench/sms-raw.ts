/**
 * The peer of bench:sms: npm `smpp` alone on loopback, no Switchboard code. One bind, a client that
 * keeps `window` submit_sm outstanding and a server that answers each at once with a message id. Runs
 * in the bench process (client and server on one event loop, as the calibration in
 * benchmarks-and-faults §1e: ~29 k/s at window 100 on an idle box).
 *
 *   npx tsx ops/bench/sms-raw.ts [n] [window]
 */
import type { AddressInfo } from 'node:net';
import smpp, { type PDU, type Session } from 'smpp';

export interface RawSmppFigures {
  readonly messages: number;
  readonly window: number;
  readonly seconds: number;
  readonly perSecond: number;
  /** Highest count of submit_sm sent and not yet answered, client side. */
  readonly maxOutstanding: number;
}

/** `n` submit_sm over one bind with `window` outstanding; resolves with the achieved rate. */
export async function rawSmppRate(n: number, window: number): Promise<RawSmppFigures> {
  let nextId = 1;
  const server = smpp.createServer((s: Session) => {
    s.on('error', () => {});
    s.socket.setNoDelay(true);
    s.on('pdu', (pdu: PDU) => {
      if (pdu.command === 'submit_sm') s.send(pdu.response({ message_id: String(nextId++) }));
      else if (!pdu.isResponse()) s.send(pdu.response());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  const client = smpp.connect({ host: '127.0.0.1', port });
  client.on('error', () => {});
  try {
    await new Promise<void>((resolve, reject) => {
      client.on('connect', () => {
        client.socket.setNoDelay(true);
        client.bind_transceiver({ system_id: 'raw', password: 'pw' }, (r: PDU) =>
          r.command_status === 0 ? resolve() : reject(new Error(`bind refused ${r.command_status}`)),
        );
      });
    });
    let sent = 0;
    let answered = 0;
    let outstanding = 0;
    let maxOutstanding = 0;
    const t0 = performance.now();
    await new Promise<void>((resolve) => {
      const pump = (): void => {
        while (outstanding < window && sent < n) {
          sent++;
          outstanding++;
          maxOutstanding = Math.max(maxOutstanding, outstanding);
          client.submit_sm(
            {
              source_addr: '15550001111',
              destination_addr: `1555${sent}`,
              short_message: 'Benchmark message',
            },
            () => {
              outstanding--;
              answered++;
              if (answered === n) resolve();
              else pump();
            },
          );
        }
      };
      pump();
    });
    const seconds = (performance.now() - t0) / 1000;
    return { messages: n, window, seconds, perSecond: n / seconds, maxOutstanding };
  } finally {
    client.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const figures = await rawSmppRate(Number(process.argv[2] ?? 100_000), Number(process.argv[3] ?? 100));
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}
