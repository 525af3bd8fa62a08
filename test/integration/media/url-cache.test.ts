/**
 * The Play-URL cache: converted files are keyed by URL + validator, revalidated with
 * If-Modified-Since when there is no ETag, replaced when the validator changes, and the directory
 * stays within its byte limit (least recently used evicted).
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tone } from '../../../src/media/engine/pcm.js';
import { UrlCache } from '../../../src/media/engine/url-cache.js';
import { pcmToBytes, readEngineWav, wavHeader } from '../../../src/media/engine/wav.js';

function wav(freq: number, ms: number): Buffer {
  const pcm = tone(freq, ms);
  return Buffer.concat([wavHeader(pcm.length * 2), pcmToBytes(pcm)]);
}

describe('UrlCache', () => {
  let http: Server;
  let base = '';
  let dir = '';
  let lastModified = 'Mon, 23 Nov 2026 08:00:00 GMT';
  const requests: { url: string; ims: string | undefined; inm: string | undefined }[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'url-cache-'));
    http = createServer((req, res) => {
      requests.push({
        url: req.url ?? '',
        ims: req.headers['if-modified-since'],
        inm: req.headers['if-none-match'],
      });
      if (req.url?.startsWith('/lm.wav')) {
        if (req.headers['if-modified-since'] === lastModified) {
          res.writeHead(304).end();
          return;
        }
        res
          .writeHead(200, { 'content-type': 'audio/x-wav', 'last-modified': lastModified })
          .end(wav(lastModified.includes('08:00') ? 440 : 880, 300));
        return;
      }
      const n = Number(req.url?.match(/\d+/)?.[0] ?? 0);
      res.writeHead(200, { 'content-type': 'audio/wav', etag: `"e${n}"` }).end(wav(300 + n * 100, 1000));
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => http?.close(r));
    await rm(dir, { recursive: true, force: true });
  });

  it('revalidates with If-Modified-Since and replaces the copy when the resource changes', async () => {
    const cache = new UrlCache({
      dir: join(dir, 'lm'),
      maxBytes: 10 ** 7,
      maxDownloadBytes: 10 ** 6,
      logger: pino({ level: 'silent' }),
      blockPrivateUrls: false,
    });
    const first = await cache.get(`${base}/lm.wav`);
    const again = await cache.get(`${base}/lm.wav`);
    expect(again).toBe(first);
    expect(requests.filter((r) => r.url === '/lm.wav').map((r) => r.ims)).toEqual([undefined, lastModified]);
    lastModified = 'Mon, 23 Nov 2026 09:00:00 GMT';
    const changed = await cache.get(`${base}/lm.wav`);
    expect(changed).not.toBe(first);
    const pcm = readEngineWav(await readFile(changed));
    expect(pcm.ok && pcm.pcm.length).toBe(2400);
    expect((await readdir(join(dir, 'lm'))).filter((f) => f.endsWith('.wav'))).toHaveLength(1);
  });

  it('keeps the directory within maxBytes, evicting the least recently used', async () => {
    // Each converted file is 16 044 bytes; room for two.
    const cache = new UrlCache({
      dir: join(dir, 'lru'),
      maxBytes: 40_000,
      maxDownloadBytes: 10 ** 6,
      logger: pino({ level: 'silent' }),
      blockPrivateUrls: false,
    });
    const a = await cache.get(`${base}/a1.wav`);
    await cache.get(`${base}/b2.wav`);
    await new Promise((r) => setTimeout(r, 5));
    await cache.get(`${base}/a1.wav`); // a is now more recent than b
    await new Promise((r) => setTimeout(r, 5));
    await cache.get(`${base}/c3.wav`);
    expect(cache.totalBytes).toBeLessThanOrEqual(40_000);
    const files = (await readdir(join(dir, 'lru'))).filter((f) => f.endsWith('.wav'));
    expect(files).toHaveLength(2);
    expect(files).toContain(a.split('/').at(-1));
  });

  it('survives a restart: the index is read back from disk', async () => {
    const warm = new UrlCache({
      dir: join(dir, 'lru'),
      maxBytes: 40_000,
      maxDownloadBytes: 10 ** 6,
      logger: pino({ level: 'silent' }),
      blockPrivateUrls: false,
    });
    const before = requests.length;
    await warm.get(`${base}/a1.wav`);
    expect(requests.length).toBe(before + 1);
    // The fresh instance knew the ETag of the copy on disk, so it revalidated instead of fetching blind.
    expect(requests.at(-1)).toMatchObject({ url: '/a1.wav', inm: '"e1"' });
    expect(warm.totalBytes).toBeGreaterThan(30_000);
  });

  it('keeps a WAV already at 8 kHz mono as downloaded: it plays where sox is not installed', async () => {
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      const cache = new UrlCache({
        dir: join(dir, 'nosox'),
        maxBytes: 10 ** 7,
        maxDownloadBytes: 10 ** 6,
        logger: pino({ level: 'silent' }),
        blockPrivateUrls: false,
      });
      const file = await cache.get(`${base}/direct7.wav`);
      const pcm = readEngineWav(await readFile(file));
      expect(pcm.ok && pcm.pcm.length).toBe(8000);
    } finally {
      process.env.PATH = path;
    }
  });
});
