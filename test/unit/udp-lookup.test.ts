import { createSocket } from 'node:dgram';
import { lookup } from 'node:dns';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { literalLookup } from '../../src/udp-lookup.js';

type Answer = [Error | null, string, number];

function answerOf(address: string, family: number | { family?: number }) {
  let sync: Answer | null = null;
  const later = new Promise<Answer>((resolve) =>
    literalLookup(address, family as number, (err, a, f) => {
      sync = [err, a, f];
      resolve([err, a, f]);
    }),
  );
  return { sync: () => sync, later };
}

describe('literalLookup', () => {
  it('answers an IP literal of the socket family at once, as dns.lookup would', () => {
    expect(answerOf('127.0.0.9', 4).sync()).toEqual([null, '127.0.0.9', 4]);
    expect(answerOf('::1', 6).sync()).toEqual([null, '::1', 6]);
    expect(answerOf('127.0.0.9', { family: 4 }).sync()).toEqual([null, '127.0.0.9', 4]);
  });

  it('answers a literal with its own family whatever the family asked, as dns.lookup does', async () => {
    const ours = answerOf('::1', 4).sync();
    const [, address, family] = await new Promise<Answer>((resolve) =>
      lookup('::1', { family: 4 }, (err, a, f) => resolve([err, a, f])),
    );
    expect(ours).toEqual([null, address, family]);
  });

  it('leaves names to dns.lookup (answered later)', async () => {
    const name = answerOf('localhost', 4);
    expect(name.sync()).toBeNull();
    const [err, address, family] = await name.later;
    expect(err).toBeNull();
    expect(family).toBe(4);
    expect(address).toMatch(/^127\./);
  });

  it('is what a udp4 socket sends through: the datagram arrives', async () => {
    const rx = createSocket('udp4');
    const tx = createSocket({ type: 'udp4', lookup: literalLookup });
    try {
      rx.bind(0, '127.0.0.1');
      await once(rx, 'listening');
      const got = once(rx, 'message');
      tx.send('ping', rx.address().port, '127.0.0.1');
      const [msg] = (await got) as [Buffer];
      expect(msg.toString()).toBe('ping');
    } finally {
      rx.close();
      tx.close();
    }
  });
});
