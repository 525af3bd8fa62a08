import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import wavefile from 'wavefile';
import { LoadWindow } from '../../../../src/media/engine/clock.js';
import { decodeG711, encodeG711, silenceByte, silencePayload } from '../../../../src/media/engine/g711.js';
import { clamp16, PcmFifo, rms, tone } from '../../../../src/media/engine/pcm.js';
import { Recorder } from '../../../../src/media/engine/recorder.js';
import { espeakVoice, pruneDir } from '../../../../src/media/engine/tts.js';
import { sniffAudioType } from '../../../../src/media/engine/url-cache.js';
import { pcmToBytes, readEngineWav, wavHeader } from '../../../../src/media/engine/wav.js';

describe('G.711', () => {
  it('round-trips within the companding error for both laws', () => {
    const pcm = tone(1000, 20, 12000);
    for (const codec of ['PCMU', 'PCMA'] as const) {
      const back = decodeG711(codec, encodeG711(codec, pcm));
      for (let i = 0; i < pcm.length; i++) expect(Math.abs(back[i]! - pcm[i]!)).toBeLessThan(400);
    }
    expect(silenceByte('PCMU')).toBe(0xff);
    expect(silenceByte('PCMA')).toBe(0xd5);
  });
});

describe('G.711 silence', () => {
  it('the prebuilt silent payload is what encoding a zero frame gives, for both laws', () => {
    for (const codec of ['PCMU', 'PCMA'] as const) {
      const encoded = encodeG711(codec, new Int16Array(160));
      expect(silencePayload(codec)).toEqual(encoded);
      expect(silencePayload(codec)[0]).toBe(silenceByte(codec));
    }
    expect(silencePayload('PCMU')).not.toEqual(silencePayload('PCMA'));
  });
});

describe('PcmFifo', () => {
  it('primes, plays out, underruns and re-primes', () => {
    const f = new PcmFifo(960, 320);
    const out = new Int16Array(160);
    f.push(new Int16Array(240).fill(1));
    expect(f.pop(out)).toBe(false); // 240 < 320 prefill
    f.push(new Int16Array(240).fill(2));
    expect(f.pop(out)).toBe(true);
    expect(out[0]).toBe(1);
    expect(f.pop(out)).toBe(true);
    expect([out[79], out[80]]).toEqual([1, 2]);
    expect(f.pop(out)).toBe(true);
    expect(f.pop(out)).toBe(false);
    expect(f.underruns).toBe(1);
  });

  it('drops the oldest samples when full', () => {
    const f = new PcmFifo(320, 160);
    f.push(Int16Array.from({ length: 400 }, (_, i) => i));
    expect(f.overflowSamples).toBe(80);
    const out = new Int16Array(160);
    f.pop(out);
    expect(out[0]).toBe(80);
  });
});

describe('PCM helpers', () => {
  it('measures energy and clamps', () => {
    expect(rms(new Int16Array(160))).toBe(0);
    expect(rms(tone(440, 100, 1000))).toBeCloseTo(1000 / Math.SQRT2, -1);
    expect(clamp16(40000)).toBe(32767);
    expect(clamp16(-40000)).toBe(-32768);
  });
});

describe('WAV', () => {
  it('writes a header wavefile reads back, and reads 8 kHz PCM, µ-law and A-law directly', () => {
    const pcm = tone(440, 100);
    const bytes = Buffer.concat([wavHeader(pcm.length * 2), pcmToBytes(pcm)]);
    const wav = new wavefile.WaveFile(bytes);
    expect((wav.fmt as { sampleRate: number }).sampleRate).toBe(8000);
    const direct = readEngineWav(bytes);
    expect(direct.ok && Array.from(direct.pcm)).toEqual(Array.from(pcm));

    const mu = new wavefile.WaveFile();
    mu.fromScratch(1, 8000, '8m', encodeG711('PCMU', pcm));
    const m = readEngineWav(mu.toBuffer());
    expect(m.ok && m.pcm.length).toBe(pcm.length);
  });

  it("asks for conversion when the format is not the engine's", () => {
    const w = new wavefile.WaveFile();
    w.fromScratch(2, 16000, '16', [new Int16Array(10), new Int16Array(10)]);
    expect(readEngineWav(w.toBuffer())).toMatchObject({ ok: false });
    expect(readEngineWav(Buffer.from('<html>'))).toMatchObject({ ok: false });
  });

  it('sniffs audio formats by magic bytes', () => {
    expect(sniffAudioType(Buffer.from('RIFF\0\0\0\0WAVE'), null)).toBe('wav');
    expect(sniffAudioType(Buffer.from('ID3\x04'), 'audio/mpeg')).toBe('mp3');
    expect(sniffAudioType(Uint8Array.of(0xff, 0xfb, 0x90), null)).toBe('mp3');
    expect(sniffAudioType(Buffer.from('OggS'), null)).toBe('ogg');
    expect(sniffAudioType(Buffer.from('hello world!'), 'application/octet-stream')).toBeNull();
  });
});

describe('espeak-ng voice mapping', () => {
  it.each([
    ['man', 'en-US', 'en-us+m3'],
    ['woman', 'en-GB', 'en-gb+f3'],
    ['alice', 'es-MX', 'es-419+f3'],
    ['Polly.Joanna', 'en-US', 'en-us+f3'],
    ['Polly.Matthew-Neural', 'en-US', 'en-us+m3'],
    ['man', 'de-DE', 'de+m3'],
    ['man', 'xx-YY', 'en-us+m3'],
    [undefined, undefined, 'en-us+m3'],
  ])('%s / %s → %s', (voice, language, expected) => {
    expect(espeakVoice(voice, language)).toBe(expected);
  });
});

describe('Recorder', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'recorder-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const opts = {
    recordingSid: 'RE00000000000000000000000000000001',
    maxLengthSeconds: 10,
    silenceTimeoutSeconds: 1,
    finishOnKey: '',
    playBeep: false,
  };
  const voiced = tone(500, 20, 8000);
  const silent = new Int16Array(160);

  it('trims leading and trailing silence and ends on the silence timeout', async () => {
    const r = new Recorder('op1', opts, dir);
    for (let i = 0; i < 10; i++) expect(r.push(silent)).toBeNull();
    for (let i = 0; i < 100; i++) expect(r.push(voiced)).toBeNull();
    for (let i = 0; i < 20; i++) expect(r.push(silent)).toBeNull(); // short pause: kept
    for (let i = 0; i < 50; i++) expect(r.push(voiced)).toBeNull();
    let end = null;
    let n = 0;
    while (!end) {
      end = r.push(silent);
      n++;
    }
    expect(end).toBe('silence');
    expect(n).toBe(50);
    const { path, durationSeconds } = await r.finish();
    expect(durationSeconds).toBeCloseTo(3.4, 5);
    const wav = new wavefile.WaveFile(await readFile(path));
    expect((wav.getSamples(false, Int16Array) as unknown as Int16Array).length).toBe(170 * 160);
  });

  it('ends at maxLength', async () => {
    const r = new Recorder('op2', { ...opts, maxLengthSeconds: 1 }, dir);
    let end = null;
    let n = 0;
    while (!end && n < 1000) {
      end = r.push(voiced);
      n++;
    }
    expect(end).toBe('max-length');
    expect(n).toBe(50);
    expect((await r.finish()).durationSeconds).toBe(1);
  });
});

describe('LoadWindow', () => {
  it('reports percentiles of tick lateness since the last take', () => {
    const w = new LoadWindow();
    for (let i = 0; i < 100; i++) w.add(i < 99 ? 0.5 : 30);
    const s = w.take();
    expect(s).toMatchObject({ ticks: 100, lateP50Ms: 0.5, lateP99Ms: 30, lateMaxMs: 30 });
    expect(w.take().ticks).toBe(0);
  });
});

describe('speech cache pruning', () => {
  it('deletes the least recently used files beyond the budget, never the one just made', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tts-prune-'));
    try {
      const names = ['a.wav', 'b.wav', 'c.wav', 'd.wav'];
      for (const [i, name] of names.entries()) {
        await writeFile(join(dir, name), Buffer.alloc(1000));
        const t = new Date(Date.now() - (10 - i) * 60_000);
        await utimes(join(dir, name), t, t);
      }
      // `a` is the oldest, but it is the file just synthesised: b and c go instead.
      await pruneDir(dir, 2500, join(dir, 'a.wav'));
      expect((await readdir(dir)).sort()).toEqual(['a.wav', 'd.wav']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
