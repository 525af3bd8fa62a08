/**
 * sipp as the far end: RTP from sip-tester's pcaps (g711a.pcap, dtmf_2833_1, dtmf_2833_pound) into
 * an endpoint answered through a tiny SIP responder. The digits are collected exactly ("1#"), and the
 * recording of the A-law speech has the pcap's duration (less its 0.6 s of leading silence, trimmed)
 * and speech energy.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import wavefile from 'wavefile';
import { newSid, SidPrefix } from '../../../src/ids.js';
import { freePort, startSipp } from '../../support/sipp.js';
import { rmsOf, startEngine, type TestEngine } from './helpers.js';
import { SipResponder } from './sip-responder.js';

describe('sipp pcap playback into an endpoint', () => {
  let t: TestEngine;
  let sip: SipResponder;
  const recordingSid = newSid(SidPrefix.Recording);

  beforeAll(async () => {
    t = await startEngine();
    sip = await SipResponder.start('127.0.0.1', async (call) => {
      const ep = await t.endpoint('sipp-call', call.offer);
      // Record and collect from the first packet on: both run side by side.
      t.engine.record('sipp-call', 'op-rec', {
        recordingSid,
        maxLengthSeconds: 60,
        silenceTimeoutSeconds: 2,
        finishOnKey: '',
        playBeep: false,
      });
      t.engine.collect('sipp-call', 'op-dtmf', { timeoutSeconds: 20, finishOnKey: '', numDigits: 2 });
      return ep.sdp;
    });
  });
  afterAll(async () => {
    sip?.close();
    await t?.close();
  });

  it('collects "1#" and records the speech with its duration and energy', async () => {
    const mediaPort = await freePort('127.0.0.2');
    const sipp = await startSipp({
      scenario: '../media/uac-pcap-audio-dtmf-expect-recorded-1pound.xml',
      remote: `${sip.address}:${sip.port}`,
      service: 'media',
      localIp: '127.0.0.2',
      timeoutSeconds: 30,
      extra: ['-mi', '127.0.0.2', '-mp', String(mediaPort)],
    });
    try {
      const collected = await t.log.waitFor('media.collectDone', (e) => e.opId === 'op-dtmf', 25_000);
      expect(collected).toMatchObject({ digits: '1#', reason: 'num-digits' });
      // Each digit reported once although its end packet came three times (RFC 4733 §2.5.1.4).
      expect(
        t.log.events.filter((e) => e.type === 'media.dtmf').map((e) => (e as { digit: string }).digit),
      ).toEqual(['1', '#']);

      const done = await t.log.waitFor('media.recordDone', (e) => e.opId === 'op-rec', 5000);
      expect(done.reason).toBe('silence');
      expect(done.recordingSid).toBe(recordingSid);
      // g711a.pcap: 236 × 30 ms = 7.08 s, of which the first ~0.6 s is near-silent (RMS 8).
      expect(done.durationSeconds).toBeGreaterThan(6.2);
      expect(done.durationSeconds).toBeLessThan(6.8);

      const wav = new wavefile.WaveFile(await readFile(join(t.recordingsDir, `${recordingSid}.wav`)));
      const fmt = wav.fmt as { sampleRate: number; numChannels: number; bitsPerSample: number };
      expect(fmt).toMatchObject({ sampleRate: 8000, numChannels: 1, bitsPerSample: 16 });
      const pcm = Int16Array.from(wav.getSamples(false, Int16Array) as unknown as ArrayLike<number>);
      expect(pcm.length / 8000).toBeCloseTo(done.durationSeconds, 2);
      expect(rmsOf(pcm)).toBeGreaterThan(1000);

      const result = await sipp.done;
      expect(result.errors).toBe('');
      expect(result.code).toBe(0);
      const stats = await t.engine.stats('sipp-call');
      expect(stats?.packetsIn).toBe(236 + 10 + 10);
      expect(stats?.packetsMalformed).toBe(0);
    } finally {
      sipp.kill();
      t.engine.release('sipp-call');
    }
  });
});
