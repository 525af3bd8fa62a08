/**
 * Symmetric RTP (RFC 4961): the endpoint sends to the SDP address until the first valid packet
 * arrives, then to that packet's source (a NAT'd far end), and ignores other sources afterwards
 * (the socket is connected to the latched source, so the kernel drops them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tone } from '../../../src/media/engine/pcm.js';
import { RtpPeer, startEngine, type TestEngine, until } from './helpers.js';

describe('symmetric RTP latching', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startEngine();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('latches to the source of the first packet and ignores other sources', async () => {
    const advertised = await RtpPeer.open('127.0.0.2');
    const natted = await RtpPeer.open('127.0.0.3');
    const intruder = await RtpPeer.open('127.0.0.4');
    try {
      // The SDP names `advertised`, but the media really comes from `natted`.
      const ep = await t.endpoint('latch', advertised.sdp());
      await until(() => advertised.received.length >= 5, 3000, 'RTP to the SDP address');
      natted.sendTo(ep);
      natted.stream(tone(500, 1000));
      await until(() => natted.received.length >= 10, 3000, 'RTP to the latched source');
      const before = advertised.received.length;
      await new Promise((r) => setTimeout(r, 200));
      expect(advertised.received.length - before).toBeLessThanOrEqual(1);

      // Once latched, another source is not heard: its packets never count as input (the socket
      // is connected to the latched source).
      natted.stopStreaming();
      await new Promise((r) => setTimeout(r, 100));
      const inBefore = (await t.engine.stats('latch'))!.packetsIn;
      intruder.sendTo(ep);
      intruder.stream(tone(900, 1000));
      await new Promise((r) => setTimeout(r, 400));
      expect((await t.engine.stats('latch'))!.packetsIn).toBe(inBefore);
      expect(intruder.received.length).toBe(0);
      expect(natted.received.length).toBeGreaterThan(20);
    } finally {
      for (const p of [advertised, natted, intruder]) p.close();
      t.engine.release('latch');
    }
  });
});
