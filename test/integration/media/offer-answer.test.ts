/**
 * SDP offer/answer through the port: an outgoing leg (our offer, their answer), then re-INVITE
 * offers that put the call on hold (their `sendonly` → our `recvonly`, we stop sending) and off it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RtpPeer, startEngine, type TestEngine, until } from './helpers.js';

describe('offer/answer', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startEngine();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('offers, applies the answer, and follows hold/resume re-offers', async () => {
    const peer = await RtpPeer.open('127.0.0.2', 'PCMA');
    try {
      const ep = await t.endpoint('oa');
      expect(ep.sdp).toMatch(/m=audio \d+ RTP\/AVP 0 8 101/);
      // Nothing is sent before the answer: the far end is unknown.
      await new Promise((r) => setTimeout(r, 100));
      expect(peer.received).toHaveLength(0);

      t.engine.applyRemoteSdp('oa', peer.sdp('8 101'));
      const applied = await t.log.waitFor('media.sdpApplied', (e) => e.endpointId === 'oa');
      expect(applied.codec).toBe('PCMA');
      expect(applied.sdp).toBe(ep.sdp); // an answer does not change our offer
      await until(() => peer.received.length >= 5, 2000, 'RTP after the answer');
      expect(peer.received.every((p) => p.pt === 8)).toBe(true);

      t.engine.applyRemoteSdp('oa', peer.sdp('8 101').replace('a=sendrecv', 'a=sendonly'));
      const hold = await t.log.waitFor('media.sdpApplied', (e) => e.endpointId === 'oa' && e.sdp !== ep.sdp);
      expect(hold.sdp).toContain('a=recvonly');
      expect(hold.sdp).toMatch(/o=switchboard \d+ 2 IN IP4/);
      await new Promise((r) => setTimeout(r, 100));
      const held = peer.received.length;
      await new Promise((r) => setTimeout(r, 300));
      expect(peer.received.length).toBe(held);

      t.engine.applyRemoteSdp('oa', peer.sdp('0 101'));
      const resume = await t.log.waitFor(
        'media.sdpApplied',
        (e) => e.endpointId === 'oa' && e.sdp.includes('a=sendrecv') && e.codec === 'PCMU',
      );
      expect(resume.sdp).toMatch(/m=audio \d+ RTP\/AVP 0 101/);
      await until(() => peer.received.length > held + 5, 2000, 'RTP after resume');
      expect(peer.received.at(-1)?.pt).toBe(0);
    } finally {
      peer.close();
      t.engine.release('oa');
    }
  });
});
