/**
 * Record and collect against a Node peer: the beep before recording, maxLength, finishOnKey,
 * silence timeout; Gather semantics (a digit during an interruptible prompt stops it and counts),
 * collect timeout and finishOnKey.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import wavefile from 'wavefile';
import { newSid, SidPrefix } from '../../../src/ids.js';
import { digitsToPcm } from '../../../src/media/engine/dtmf.js';
import { decodeG711, encodeG711 } from '../../../src/media/engine/g711.js';
import { tone } from '../../../src/media/engine/pcm.js';
import { buildRtp } from '../../../src/media/engine/rtp.js';
import { RtpPeer, rmsOf, startEngine, type TestEngine, tonePower, until } from './helpers.js';

describe('record and collect', () => {
  let t: TestEngine;
  let peer: RtpPeer;
  let n = 0;
  let id = '';
  beforeAll(async () => {
    t = await startEngine();
  });
  afterAll(async () => {
    await t?.close();
  });
  async function call(): Promise<void> {
    id = `rc-${++n}`;
    peer = await RtpPeer.open('127.0.0.2');
    peer.sendTo(await t.endpoint(id, peer.sdp()));
  }
  afterEach(() => {
    peer?.close();
    t.engine.release(id);
  });

  async function samples(sid: string): Promise<Int16Array> {
    const wav = new wavefile.WaveFile(await readFile(join(t.recordingsDir, `${sid}.wav`)));
    return Int16Array.from(wav.getSamples(false, Int16Array) as unknown as ArrayLike<number>);
  }

  it('beeps, then records until maxLength', async () => {
    await call();
    peer.stream(tone(600, 1000));
    const sid = newSid(SidPrefix.Recording);
    const since = performance.now();
    t.engine.record(id, 'op-max', {
      recordingSid: sid,
      maxLengthSeconds: 1,
      silenceTimeoutSeconds: 5,
      finishOnKey: '#',
      playBeep: true,
    });
    const done = await t.log.waitFor('media.recordDone', (e) => e.opId === 'op-max', 5000);
    expect(done.reason).toBe('max-length');
    expect(done.durationSeconds).toBeCloseTo(1, 1);
    // The 1 kHz beep came first (400 ms).
    const heard = peer.decoded(since).subarray(0, 3200);
    expect(tonePower(heard, 1000)).toBeGreaterThan(100 * tonePower(heard, 3000));
    const pcm = await samples(sid);
    expect(pcm.length).toBe(8000);
    expect(tonePower(pcm, 600)).toBeGreaterThan(100 * tonePower(pcm, 1000));
  });

  it('ends a recording on its finishOnKey and reports the digit', async () => {
    await call();
    peer.stream(tone(600, 1000));
    const sid = newSid(SidPrefix.Recording);
    t.engine.record(id, 'op-key', {
      recordingSid: sid,
      maxLengthSeconds: 30,
      silenceTimeoutSeconds: 5,
      finishOnKey: '#*',
      playBeep: false,
    });
    await new Promise((r) => setTimeout(r, 700));
    peer.sendDtmf('*');
    const done = await t.log.waitFor('media.recordDone', (e) => e.opId === 'op-key', 5000);
    expect(done).toMatchObject({ reason: 'finish-key', digits: '*' });
    expect(done.durationSeconds).toBeGreaterThan(0.4);
    expect(done.durationSeconds).toBeLessThan(1.2);
    expect(rmsOf(await samples(sid))).toBeGreaterThan(1000);
  });

  it('ends on silence and trims it', async () => {
    await call();
    const sid = newSid(SidPrefix.Recording);
    t.engine.record(id, 'op-sil', {
      recordingSid: sid,
      maxLengthSeconds: 30,
      silenceTimeoutSeconds: 1,
      finishOnKey: '',
      playBeep: false,
    });
    peer.stream(tone(600, 1000));
    await new Promise((r) => setTimeout(r, 800));
    peer.stopStreaming();
    const done = await t.log.waitFor('media.recordDone', (e) => e.opId === 'op-sil', 5000);
    expect(done.reason).toBe('silence');
    expect(done.durationSeconds).toBeGreaterThan(0.6);
    expect(done.durationSeconds).toBeLessThan(1.0);
  });

  it('gather: a digit interrupts the prompt, counts, and # finishes the input', async () => {
    await call();
    t.engine.play(id, 'op-prompt', { kind: 'tone', frequencyHz: 440, ms: 5000 }, { interruptOnDtmf: true });
    t.engine.collect(id, 'op-gather', { timeoutSeconds: 5, finishOnKey: '#' });
    await until(() => peer.received.length > 10, 3000, 'prompt audio');
    peer.sendDtmf('4');
    expect((await t.log.waitFor('media.playDone', (e) => e.opId === 'op-prompt')).reason).toBe('interrupted');
    peer.sendDtmf('2');
    peer.sendDtmf('#');
    const done = await t.log.waitFor('media.collectDone', (e) => e.opId === 'op-gather');
    expect(done).toMatchObject({ digits: '42', reason: 'finish-key' });
  });

  it('records packets that arrived out of order in sequence order (jitter buffer)', async () => {
    await call();
    const sid = newSid(SidPrefix.Recording);
    t.engine.record(id, 'op-order', {
      recordingSid: sid,
      maxLengthSeconds: 30,
      silenceTimeoutSeconds: 1,
      finishOnKey: '',
      playBeep: false,
    });
    // 30 frames, frame k a constant level rising with k, sent as 0, (2 1), (4 3), ... (28 27), 29:
    // the two packets of a swapped pair leave together, so a stall of this test process can delay
    // a pair but never strand its first packet past the playout point (a late drop, not a reorder).
    const levels = Array.from({ length: 30 }, (_, k) => 1000 + k * 300);
    const send = (k: number) =>
      peer.sendRaw(
        buildRtp(0, 500 + k, 9000 + k * 160, 4242, encodeG711('PCMU', new Int16Array(160).fill(levels[k]!))),
      );
    const groups = [[0], ...Array.from({ length: 14 }, (_, i) => [2 * i + 2, 2 * i + 1]), [29]];
    for (const group of groups) {
      for (const k of group) send(k);
      await new Promise((r) => setTimeout(r, 20 * group.length));
    }
    const done = await t.log.waitFor('media.recordDone', (e) => e.opId === 'op-order', 5000);
    expect(done.reason).toBe('silence');
    const pcm = await samples(sid);
    // Every frame sent has a level of 1000 or more: a silent frame is playout waiting for a pair
    // this test process sent late (a stall under load), not a reordering fault.
    const frameLevels = Array.from(
      { length: Math.floor(pcm.length / 160) },
      (_, i) => pcm[i * 160 + 80]!,
    ).filter((level) => level !== 0);
    // Every frame recorded once: as many distinct levels as the 30 levels give after PCMU.
    const sentLevels = new Set(decodeG711('PCMU', encodeG711('PCMU', Int16Array.from(levels))));
    expect(new Set(frameLevels).size).toBe(sentLevels.size);
    expect(sentLevels.size).toBeGreaterThanOrEqual(28);
    for (let i = 1; i < frameLevels.length; i++)
      expect(frameLevels[i]!).toBeGreaterThanOrEqual(frameLevels[i - 1]!);
    const stats = await t.engine.stats(id);
    expect(stats?.packetsLost).toBe(0);
  });

  it('collects in-band DTMF from a far end without telephone-event', async () => {
    id = `rc-${++n}`;
    peer = await RtpPeer.open('127.0.0.2');
    peer.sendTo(await t.endpoint(id, peer.sdp('0')));
    t.engine.collect(id, 'op-inband', { timeoutSeconds: 5, finishOnKey: '#' });
    peer.stream(digitsToPcm('42#'), false);
    const done = await t.log.waitFor('media.collectDone', (e) => e.opId === 'op-inband', 5000);
    expect(done).toMatchObject({ digits: '42', reason: 'finish-key' });
    expect(t.log.events.filter((e) => e.type === 'media.dtmf' && e.endpointId === id)).toHaveLength(3);
  });

  it('collect times out after the prompt with the digits so far', async () => {
    await call();
    t.engine.play(id, 'op-p2', { kind: 'tone', frequencyHz: 440, ms: 400 });
    const started = performance.now();
    t.engine.collect(id, 'op-to', { timeoutSeconds: 1, finishOnKey: '#' });
    await t.log.waitFor('media.playDone', (e) => e.opId === 'op-p2');
    peer.sendDtmf('7');
    const done = await t.log.waitFor('media.collectDone', (e) => e.opId === 'op-to', 5000);
    expect(done).toMatchObject({ digits: '7', reason: 'timeout' });
    // The timeout runs from the end of the prompt (and the last digit), not from the collect command.
    expect(performance.now() - started).toBeGreaterThan(1300);
  });

  it('stop ends a running collect and record with reason stopped', async () => {
    await call();
    const sid = newSid(SidPrefix.Recording);
    t.engine.collect(id, 'op-c', { timeoutSeconds: 30, finishOnKey: '#' });
    t.engine.record(id, 'op-r', {
      recordingSid: sid,
      maxLengthSeconds: 30,
      silenceTimeoutSeconds: 0,
      finishOnKey: '',
      playBeep: false,
    });
    peer.stream(tone(600, 1000));
    await new Promise((r) => setTimeout(r, 300));
    t.engine.stop(id);
    expect((await t.log.waitFor('media.collectDone', (e) => e.opId === 'op-c')).reason).toBe('stopped');
    expect((await t.log.waitFor('media.recordDone', (e) => e.opId === 'op-r')).reason).toBe('stopped');
    expect(await t.storage.size(sid)).toBeGreaterThan(44);
  });
});
