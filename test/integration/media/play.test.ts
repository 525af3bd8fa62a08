/**
 * Play and Say to a Node RTP sink: 50 packets/s (±2 %) with consecutive sequence numbers, and the
 * audio decodes back to the prompt (non-silent, right pitch).
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DtmfDetector } from '../../../src/media/engine/dtmf.js';
import { RtpPeer, rmsOf, startEngine, type TestEngine, tonePower, until } from './helpers.js';

const FIXTURES = resolve(import.meta.dirname, '../../fixtures/media');

/** Packets per second between the first and the last packet of a run. */
function rate(ats: readonly number[]): number {
  return ((ats.length - 1) / (ats.at(-1)! - ats[0]!)) * 1000;
}

describe('play to a Node RTP sink', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startEngine();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('plays an 8 kHz WAV at 50 packets/s and the sink decodes the 440 Hz prompt', async () => {
    const sink = await RtpPeer.open('127.0.0.2', 'PCMU');
    try {
      const ep = await t.endpoint('play-wav', sink.sdp());
      expect(ep.sdp).toMatch(/m=audio \d+ RTP\/AVP 0 101/);
      const start = performance.now();
      t.engine.play('play-wav', 'op-wav', { kind: 'file', path: `${FIXTURES}/prompt-8k.wav` });
      const done = await t.log.waitFor('media.playDone', (e) => e.opId === 'op-wav');
      expect(done.reason).toBe('completed');
      const end = performance.now();
      await until(() => sink.received.some((p) => p.at > end + 100), 2000, 'packets after the prompt');
      const during = sink.received.filter((p) => p.at >= start && p.at <= end);
      // The 3 s prompt is 150 packets, sent one per tick.
      const voiced = during.filter((p) => rmsOf(sink.decodedOne(p)) > 1000);
      expect(voiced.length).toBeGreaterThanOrEqual(147);
      expect(voiced.length).toBeLessThanOrEqual(153);
      const r = rate(voiced.map((p) => p.at));
      expect(r).toBeGreaterThan(49);
      expect(r).toBeLessThan(51);
      for (let i = 1; i < during.length; i++) expect((during[i]!.seq - during[i - 1]!.seq) & 0xffff).toBe(1);
      const audio = sink.decoded(start);
      expect(tonePower(audio, 440)).toBeGreaterThan(100 * tonePower(audio, 1000));
      const stats = await t.engine.stats('play-wav');
      expect(stats?.packetsOut).toBeGreaterThanOrEqual(150);
    } finally {
      sink.close();
      t.engine.release('play-wav');
    }
  });

  it('sends silence while idle to a peer that never sends: one stream, 20 ms apart, the codec silence', async () => {
    for (const [codec, pt, byte] of [
      ['PCMU', 0, 0xff],
      ['PCMA', 8, 0xd5],
    ] as const) {
      const sink = await RtpPeer.open('127.0.0.2', codec);
      const id = `idle-${codec}`;
      try {
        await t.endpoint(id, sink.sdp());
        await until(() => sink.received.length >= 25, 3000, 'silent packets');
        const got = sink.received.slice(0, 25);
        expect(got[0]!.marker).toBe(true);
        for (const [i, p] of got.entries()) {
          expect(p.pt).toBe(pt);
          expect(p.payload).toEqual(new Uint8Array(160).fill(byte));
          if (i === 0) continue;
          expect(p.marker).toBe(false);
          expect((p.seq - got[i - 1]!.seq) & 0xffff).toBe(1);
          expect((p.ts - got[i - 1]!.ts) >>> 0).toBe(160);
        }
        const r = rate(got.map((p) => p.at));
        expect(r).toBeGreaterThan(45);
        expect(r).toBeLessThan(55);
      } finally {
        sink.close();
        t.engine.release(id);
      }
    }
  });

  it('converts a 16 kHz stereo WAV with sox and plays it (PCMA)', async () => {
    const sink = await RtpPeer.open('127.0.0.2', 'PCMA');
    try {
      await t.endpoint('play-16k', sink.sdp());
      const start = performance.now();
      t.engine.play('play-16k', 'op-16k', { kind: 'file', path: `${FIXTURES}/tone-16k-stereo.wav` });
      expect((await t.log.waitFor('media.playDone', (e) => e.opId === 'op-16k')).reason).toBe('completed');
      const audio = sink.decoded(start, 'PCMA');
      expect(sink.received.every((p) => p.pt === 8)).toBe(true);
      expect(tonePower(audio, 600)).toBeGreaterThan(100 * tonePower(audio, 440));
    } finally {
      sink.close();
      t.engine.release('play-16k');
    }
  });

  it('speaks text with espeak-ng at 50 packets/s and the speech is not silent', async () => {
    const sink = await RtpPeer.open('127.0.0.3', 'PCMU');
    try {
      await t.endpoint('say', sink.sdp());
      const start = performance.now();
      t.engine.play('say', 'op-say', {
        kind: 'tts',
        text: 'Welcome to Switchboard. Please enter your account number, followed by the pound key.',
        voice: 'woman',
        language: 'en-US',
      });
      expect((await t.log.waitFor('media.playDone', (e) => e.opId === 'op-say')).reason).toBe('completed');
      const pkts = sink.received.filter((p) => p.at >= start);
      const voiced = pkts.filter((p) => rmsOf(sink.decodedOne(p)) > 300);
      expect(voiced.length).toBeGreaterThan(100);
      const first = pkts.indexOf(voiced[0]!);
      const last = pkts.lastIndexOf(voiced.at(-1)!);
      const r = rate(pkts.slice(first, last + 1).map((p) => p.at));
      expect(r).toBeGreaterThan(49);
      expect(r).toBeLessThan(51);
      expect(rmsOf(sink.decoded(start))).toBeGreaterThan(300);
    } finally {
      sink.close();
      t.engine.release('say');
    }
  });

  it('loops a prompt and stops it on demand (stopped), and DTMF interrupts an interruptible prompt', async () => {
    const peer = await RtpPeer.open('127.0.0.2', 'PCMU');
    try {
      const ep = await t.endpoint('loop', peer.sdp());
      peer.sendTo(ep);
      t.engine.play('loop', 'op-loop', { kind: 'tone', frequencyHz: 800, ms: 100 }, { loop: 0 });
      await until(() => peer.received.length > 20, 3000, 'looped audio');
      t.engine.stop('loop');
      expect((await t.log.waitFor('media.playDone', (e) => e.opId === 'op-loop')).reason).toBe('stopped');

      t.engine.play(
        'loop',
        'op-int',
        { kind: 'tone', frequencyHz: 800, ms: 5000 },
        { interruptOnDtmf: true },
      );
      await until(() => peer.received.length > 40, 3000, 'prompt audio');
      peer.sendDtmf('5');
      const done = await t.log.waitFor('media.playDone', (e) => e.opId === 'op-int', 3000);
      expect(done.reason).toBe('interrupted');
      expect((await t.log.waitFor('media.dtmf', (e) => e.endpointId === 'loop')).digit).toBe('5');
    } finally {
      peer.close();
      t.engine.release('loop');
    }
  });

  it('plays digits as RFC 4733 events when the far end negotiated telephone-event', async () => {
    const peer = await RtpPeer.open('127.0.0.2', 'PCMU');
    try {
      await t.endpoint('digits', peer.sdp());
      const start = performance.now();
      t.engine.play('digits', 'op-digits', { kind: 'digits', digits: '1w2#' });
      expect((await t.log.waitFor('media.playDone', (e) => e.opId === 'op-digits')).reason).toBe('completed');
      const events = peer.received.filter((p) => p.at >= start && p.pt === 101);
      const detector = new DtmfDetector();
      const heard = events.map((p) => detector.push(1, p.ts, p.payload)).filter((d) => d !== null);
      expect(heard).toEqual(['1', '2', '#']);
      expect(events.filter((p) => p.marker)).toHaveLength(3);
      expect(events.filter((p) => (p.payload[1]! & 0x80) !== 0)).toHaveLength(9); // 3 end packets each
      const starts = events.filter((p) => p.marker).map((p) => p.ts);
      // '1' then w (0.5 s) then '2': (9 + 25) ticks of 160 samples apart.
      expect((starts[1]! - starts[0]!) >>> 0).toBe(34 * 160);

      t.engine.play('digits', 'op-bad', { kind: 'digits', digits: '12x' });
      expect((await t.log.waitFor('media.playFailed', (e) => e.opId === 'op-bad')).reason).toBe('bad-digits');
    } finally {
      peer.close();
      t.engine.release('digits');
    }
  });

  it('plays digits as in-band tones when the far end has no telephone-event', async () => {
    const peer = await RtpPeer.open('127.0.0.3', 'PCMU');
    try {
      await t.endpoint('inband', peer.sdp('0'));
      const start = performance.now();
      t.engine.play('inband', 'op-inband', { kind: 'digits', digits: '1' });
      expect((await t.log.waitFor('media.playDone', (e) => e.opId === 'op-inband')).reason).toBe('completed');
      expect(peer.received.some((p) => p.pt === 101)).toBe(false);
      const audio = peer.decoded(start);
      // 1 = 697 Hz + 1209 Hz
      expect(tonePower(audio, 697)).toBeGreaterThan(50 * tonePower(audio, 941));
      expect(tonePower(audio, 1209)).toBeGreaterThan(50 * tonePower(audio, 1477));
    } finally {
      peer.close();
      t.engine.release('inband');
    }
  });
});
