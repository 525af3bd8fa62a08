/**
 * WebRTC endpoints against a real WebRTC peer (werift as the browser, full ICE, DTLS-SRTP over
 * loopback): the answer's shape, audio both ways through Opus, DTMF, the engine's own offer, and a
 * bridge to a plain RTP leg.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import wavefile from 'wavefile';
import { newSid, SidPrefix } from '../../../src/ids.js';
import { decodeG711 } from '../../../src/media/engine/g711.js';
import { tone } from '../../../src/media/engine/pcm.js';
import { RtpPeer, rmsOf, startEngine, type TestEngine, tonePower, until } from './helpers.js';
import { BrowserPeer, tone48k } from './webrtc-peer.js';

describe('WebRTC endpoints', () => {
  let t: TestEngine;
  const peers: BrowserPeer[] = [];
  beforeAll(async () => {
    t = await startEngine();
  });
  afterAll(async () => {
    await Promise.all(peers.map((p) => p.close()));
    await t?.close();
  });

  async function browserCall(id: string): Promise<{ peer: BrowserPeer; answer: string }> {
    const peer = new BrowserPeer();
    peers.push(peer);
    const info = await t.endpoint(id, await peer.offer());
    await peer.acceptAnswer(info.sdp);
    await peer.connected();
    return { peer, answer: info.sdp };
  }

  it('answers a browser offer ICE-lite, DTLS passive, bundled, Opus first, and plays to it', async () => {
    const { peer, answer } = await browserCall('wr-play');
    expect(answer).toMatch(/^m=audio \d+ UDP\/TLS\/RTP\/SAVPF 111 /m);
    expect(answer).toContain('a=ice-lite');
    expect(answer).toContain('a=setup:passive');
    expect(answer).toMatch(/^a=fingerprint:sha-256 ([0-9A-F]{2}:){31}[0-9A-F]{2}$/m);
    expect(answer).toContain('a=group:BUNDLE 0');
    expect(answer).toContain('a=mid:0');
    expect(answer).toContain('a=rtcp-mux');
    expect(answer).toMatch(/^a=rtpmap:110 telephone-event\/48000$/m);
    // We play and record 8 kHz: the browser is told not to send (or expect) more than narrowband.
    expect(answer).toMatch(/^a=fmtp:111 .*maxplaybackrate=8000/m);
    expect(answer).toMatch(/^a=candidate:\S+ 1 udp \d+ 127\.0\.0\.1 \d+ typ host/m);

    t.engine.play('wr-play', 'p1', { kind: 'tone', frequencyHz: 700, ms: 3000 });
    // 1 s of decrypted Opus, decoded by the peer.
    await until(() => peer.received.filter((r) => r.pt === 111).length >= 50, 10_000, 'opus from the engine');
    const heard = peer.decodedOpus();
    expect(rmsOf(heard)).toBeGreaterThan(1000);
    expect(tonePower(heard, 700)).toBeGreaterThan(50 * tonePower(heard, 1500));
    t.engine.release('wr-play');
    await t.log.waitFor('media.released', (e) => e.endpointId === 'wr-play');
  });

  it('records what the browser sends (Opus) as non-silent WAV and collects its DTMF', async () => {
    const { peer } = await browserCall('wr-rec');
    peer.stream(tone48k(500, 1000));
    const sid = newSid(SidPrefix.Recording);
    t.engine.record('wr-rec', 'r1', {
      recordingSid: sid,
      maxLengthSeconds: 1,
      silenceTimeoutSeconds: 0,
      finishOnKey: '',
      playBeep: false,
    });
    const done = await t.log.waitFor('media.recordDone', (e) => e.opId === 'r1', 10_000);
    expect(done.reason).toBe('max-length');
    const wav = new wavefile.WaveFile(await readFile(join(t.recordingsDir, `${sid}.wav`)));
    const pcm = Int16Array.from(wav.getSamples(false, Int16Array) as unknown as ArrayLike<number>);
    expect(rmsOf(pcm)).toBeGreaterThan(1000);
    expect(tonePower(pcm, 500)).toBeGreaterThan(50 * tonePower(pcm, 1500));
    peer.stop();

    t.engine.collect('wr-rec', 'c1', { timeoutSeconds: 5, finishOnKey: '#' });
    peer.sendDigit('7');
    await t.log.waitFor('media.dtmf', (e) => e.endpointId === 'wr-rec' && e.digit === '7');
    peer.sendDigit('#');
    const collected = await t.log.waitFor('media.collectDone', (e) => e.opId === 'c1');
    expect(collected).toMatchObject({ digits: '7', reason: 'finish-key' });
    t.engine.release('wr-rec');
  });

  it('offers WebRTC itself and applies the browser answer', async () => {
    t.engine.createEndpoint('wr-offer', { webrtc: true });
    const ready = await t.log.waitFor('media.endpointReady', (e) => e.endpoint.endpointId === 'wr-offer');
    const offer = ready.endpoint.sdp;
    expect(offer).toContain('a=ice-lite');
    expect(offer).toMatch(/^a=setup:actpass$/m);
    expect(offer).toMatch(/^m=audio \d+ UDP\/TLS\/RTP\/SAVPF 111 /m);
    const peer = new BrowserPeer();
    peers.push(peer);
    t.engine.applyRemoteSdp('wr-offer', await peer.answer(offer));
    const applied = await t.log.waitFor('media.sdpApplied', (e) => e.endpointId === 'wr-offer');
    expect(applied.codec).toBe('opus');
    await peer.connected();
    t.engine.play('wr-offer', 'p2', { kind: 'tone', frequencyHz: 900, ms: 3000 });
    await until(() => peer.received.filter((r) => r.pt === 111).length >= 50, 10_000, 'opus from the engine');
    const heard = peer.decodedOpus();
    expect(tonePower(heard, 900)).toBeGreaterThan(50 * tonePower(heard, 1500));
    t.engine.release('wr-offer');
  });

  it('bridges a browser to a plain G.711 leg, transcoding both ways', async () => {
    const { peer } = await browserCall('wr-bridge');
    const sip = await RtpPeer.open('127.0.0.2');
    try {
      sip.sendTo(await t.endpoint('plain-bridge', sip.sdp()));
      t.engine.bridge('wr-bridge', 'plain-bridge');
      sip.stream(tone(600, 1000));
      peer.stream(tone48k(400, 1000));
      const from = peer.received.length;
      const since = performance.now();
      await until(() => peer.received.length - from >= 50, 10_000, 'bridged audio at the browser');
      await until(
        () => sip.received.filter((p) => p.at >= since).length >= 50,
        10_000,
        'bridged audio at the SIP leg',
      );
      const atBrowser = peer.decodedOpus(from);
      expect(tonePower(atBrowser, 600)).toBeGreaterThan(50 * tonePower(atBrowser, 1500));
      const atSip = sip.decoded(since);
      expect(tonePower(atSip, 400)).toBeGreaterThan(50 * tonePower(atSip, 1500));
    } finally {
      peer.stop();
      sip.close();
      t.engine.release('wr-bridge');
      t.engine.release('plain-bridge');
    }
  });
});

describe('WebRTC endpoints with WEBRTC_CODECS=PCMU,opus', () => {
  let t: TestEngine;
  let peer: BrowserPeer | null = null;
  beforeAll(async () => {
    t = await startEngine({ webrtcCodecs: ['PCMU', 'opus'] });
  });
  afterAll(async () => {
    await peer?.close();
    await t?.close();
  });

  it('answers PCMU first and sends G.711 over SRTP', async () => {
    peer = new BrowserPeer();
    const info = await t.endpoint('wr-pcmu', await peer.offer());
    expect(info.sdp).toMatch(/^m=audio \d+ UDP\/TLS\/RTP\/SAVPF 0 /m);
    await peer.acceptAnswer(info.sdp);
    await peer.connected();
    t.engine.play('wr-pcmu', 'p', { kind: 'tone', frequencyHz: 700, ms: 3000 });
    await until(() => peer!.received.filter((r) => r.pt === 0).length >= 50, 10_000, 'PCMU from the engine');
    const heard = decodeG711(
      'PCMU',
      Buffer.concat(peer.received.filter((r) => r.pt === 0).map((r) => r.payload)),
    );
    expect(tonePower(heard, 700)).toBeGreaterThan(50 * tonePower(heard, 1500));
    t.engine.release('wr-pcmu');
  });
});
