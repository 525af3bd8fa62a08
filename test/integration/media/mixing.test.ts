/**
 * Bridge and conference with real Node RTP peers. Each peer sends its own tone, so what a peer
 * hears can be taken apart by frequency (Goertzel): a bridged peer hears the other's tone; a
 * conference participant hears every other participant's tone and not its own; a muted
 * participant is heard by nobody.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DtmfDetector } from '../../../src/media/engine/dtmf.js';
import { tone } from '../../../src/media/engine/pcm.js';
import { RtpPeer, startEngine, type TestEngine, tonePower, until } from './helpers.js';

/** Seconds of audio a peer received since `since`, once at least `ms` of it arrived. */
async function listen(peer: RtpPeer, since: number, ms: number): Promise<Int16Array> {
  await until(() => peer.received.filter((p) => p.at >= since).length >= ms / 20, ms + 3000, 'audio');
  return peer.decoded(since);
}

/** Whether `freq` is clearly present in `pcm` (against an absent reference frequency). */
function hears(pcm: Int16Array, freq: number): boolean {
  return tonePower(pcm, freq) > 50 * tonePower(pcm, 3300);
}

describe('bridge and conference', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startEngine();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('bridges A and B: each hears the other (PCMU ↔ PCMA transcoded), DTMF is relayed', async () => {
    const a = await RtpPeer.open('127.0.0.2', 'PCMU');
    const b = await RtpPeer.open('127.0.0.3', 'PCMA');
    try {
      a.sendTo(await t.endpoint('br-a', a.sdp()));
      b.sendTo(await t.endpoint('br-b', b.sdp()));
      t.engine.bridge('br-a', 'br-b');
      a.stream(tone(500, 1000));
      b.stream(tone(1200, 1000));
      const since = performance.now() + 200;
      await new Promise((r) => setTimeout(r, 200));
      const atA = await listen(a, since, 1000);
      const atB = await listen(b, since, 1000);
      expect(hears(atB, 500)).toBe(true);
      expect(hears(atA, 1200)).toBe(true);
      expect(hears(atA, 500)).toBe(false);
      expect(hears(atB, 1200)).toBe(false);

      // DTMF from A crosses the bridge as RFC 4733 events (one digit at B), and is reported for A.
      const sinceDtmf = performance.now();
      a.sendDtmf('9');
      await until(
        () => b.received.some((p) => p.at >= sinceDtmf && p.pt === 101 && (p.payload[1]! & 0x80) !== 0),
        2000,
        'relayed DTMF',
      );
      const relayed = b.received.filter((p) => p.at >= sinceDtmf && p.pt === 101);
      const detector = new DtmfDetector();
      expect(relayed.map((p) => detector.push(1, p.ts, p.payload)).filter((d) => d !== null)).toEqual(['9']);
      expect(relayed.filter((p) => p.marker)).toHaveLength(1);
      expect((await t.log.waitFor('media.dtmf', (e) => e.endpointId === 'br-a')).digit).toBe('9');

      // Muting A: B no longer hears it; A still hears B.
      t.engine.setMuted('br-a', true);
      await new Promise((r) => setTimeout(r, 100));
      const since2 = performance.now() + 100;
      await new Promise((r) => setTimeout(r, 100));
      expect(hears(await listen(b, since2, 600), 500)).toBe(false);
      expect(hears(await listen(a, since2, 600), 1200)).toBe(true);
    } finally {
      a.close();
      b.close();
      t.engine.release('br-a');
      t.engine.release('br-b');
    }
  });

  it('conference of three: each hears the sum of the others and not itself; a muted one is not heard', async () => {
    const freqs = [450, 900, 1700] as const;
    const peers = await Promise.all(['127.0.0.2', '127.0.0.3', '127.0.0.4'].map((ip) => RtpPeer.open(ip)));
    const ids = ['cf-1', 'cf-2', 'cf-3'];
    try {
      for (const [i, p] of peers.entries()) {
        p.sendTo(await t.endpoint(ids[i]!, p.sdp()));
        t.engine.conferenceJoin(ids[i]!, { room: 'AC1:room' });
        p.stream(tone(freqs[i]!, 1000));
      }
      const joined = await t.log.waitFor('media.conferenceJoined', (e) => e.endpointId === 'cf-3');
      expect(joined.participants).toBe(3);
      await new Promise((r) => setTimeout(r, 200));
      const since = performance.now();
      for (const [i, p] of peers.entries()) {
        const heard = await listen(p, since, 1000);
        for (const [j, f] of freqs.entries())
          expect(hears(heard, f), `peer ${i} hears ${f} Hz`).toBe(i !== j);
      }

      t.engine.setMuted('cf-1', true);
      await new Promise((r) => setTimeout(r, 100));
      const since2 = performance.now() + 100;
      await new Promise((r) => setTimeout(r, 100));
      const at2 = await listen(peers[1]!, since2, 800);
      const at3 = await listen(peers[2]!, since2, 800);
      const at1 = await listen(peers[0]!, since2, 800);
      expect(hears(at2, freqs[0])).toBe(false);
      expect(hears(at3, freqs[0])).toBe(false);
      expect(hears(at2, freqs[2])).toBe(true);
      expect(hears(at1, freqs[1]) && hears(at1, freqs[2])).toBe(true);

      t.engine.conferenceLeave('cf-3');
      expect((await t.log.waitFor('media.conferenceLeft', (e) => e.endpointId === 'cf-3')).participants).toBe(
        2,
      );
    } finally {
      for (const p of peers) p.close();
      for (const id of ids) t.engine.release(id);
    }
  });

  it('plays wait music to a participant alone in the room, and beeps on join', async () => {
    const p = await RtpPeer.open('127.0.0.2');
    const q = await RtpPeer.open('127.0.0.3');
    try {
      await t.endpoint('wm-1', p.sdp());
      t.engine.conferenceJoin('wm-1', {
        room: 'AC1:wait',
        waitMusic: { kind: 'tone', frequencyHz: 700, ms: 500 },
      });
      const since = performance.now() + 200;
      await new Promise((r) => setTimeout(r, 200));
      expect(hears(await listen(p, since, 600), 700)).toBe(true);

      q.sendTo(await t.endpoint('wm-2', q.sdp()));
      t.engine.conferenceJoin('wm-2', { room: 'AC1:wait', beep: true });
      await t.log.waitFor('media.conferenceJoined', (e) => e.endpointId === 'wm-2');
      const since2 = performance.now();
      // The join beep (1 kHz, 200 ms) reaches the participant who was waiting.
      expect(hears(await listen(p, since2, 300), 1000)).toBe(true);
      await new Promise((r) => setTimeout(r, 300));
      const since3 = performance.now();
      expect(hears(await listen(p, since3, 400), 700)).toBe(false);
    } finally {
      p.close();
      q.close();
      t.engine.release('wm-1');
      t.engine.release('wm-2');
    }
  });
});
