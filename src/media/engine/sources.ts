/**
 * Turns a `PlaySource` into 8 kHz PCM, off the clock: files are read asynchronously, anything not
 * already 8 kHz mono is converted by sox in a child process, URLs go through the download cache,
 * speech through espeak-ng. Decoded prompts are kept in memory (bounded, LRU) and concurrent loads
 * of the same source share one conversion, so 250 calls playing one prompt cost one decode.
 */
import { mkdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { PlaySource } from '../port.js';
import type { MediaSettings, PlayUrlPolicy } from '../settings.js';
import { MEDIA } from './constants.js';
import { soxTo8kWav } from './convert.js';
import { badDigit, digitsToPcm } from './dtmf.js';
import { PlayError } from './errors.js';
import { tone } from './pcm.js';
import { synthesize } from './tts.js';
import { UrlCache } from './url-cache.js';
import { readEngineWav } from './wav.js';

/** Cache locations, limits and URL policy of a `SourceLoader` (the engine's settings, in part). */
export interface SourceLoaderOptions
  extends Pick<MediaSettings, 'cacheDir' | 'cacheMaxBytes' | 'maxDownloadBytes'>,
    PlayUrlPolicy {
  readonly logger: Logger;
  /** Bound on decoded prompts kept in memory. */
  readonly memoryBytes?: number;
}

/** Loads play sources into 8 kHz PCM off the clock (see the file header). */
export class SourceLoader {
  private readonly memory = new Map<string, Int16Array>();
  private memoryBytes = 0;
  private readonly inflight = new Map<string, Promise<Int16Array>>();
  private readonly urls: UrlCache;

  constructor(private readonly o: SourceLoaderOptions) {
    this.urls = new UrlCache({
      dir: join(o.cacheDir, 'url'),
      maxBytes: o.cacheMaxBytes,
      maxDownloadBytes: o.maxDownloadBytes,
      logger: o.logger,
      blockPrivateUrls: o.blockPrivateUrls,
      urlTimeoutMs: o.urlTimeoutMs,
    });
  }

  /** PCM for a source; rejects with `PlayError`. */
  async load(source: PlaySource): Promise<Int16Array> {
    switch (source.kind) {
      case 'silence':
        return new Int16Array(Math.round((MEDIA.SAMPLE_RATE * Math.max(0, source.ms)) / 1000));
      case 'tone':
        return tone(source.frequencyHz, source.ms);
      case 'digits': {
        const bad = badDigit(source.digits);
        if (bad !== null) throw new PlayError('bad-digits', `not a DTMF digit: ${JSON.stringify(bad)}`);
        return digitsToPcm(source.digits);
      }
      case 'file':
        return this.loadFile(source.path);
      case 'url':
        return this.loadFile(await this.urls.get(source.url));
      case 'tts': {
        if (source.text.trim() === '') return new Int16Array(0);
        const path = await synthesize(
          join(this.o.cacheDir, 'tts'),
          source.text,
          source.voice,
          source.language,
          // Speech shares the cache budget: a quarter of MEDIA_CACHE_MAX_BYTES.
          this.o.cacheMaxBytes / 4,
        );
        return this.loadFile(path);
      }
    }
  }

  /** Reads (or converts) a WAV file; memoised by path + mtime + size. */
  private async loadFile(path: string): Promise<Int16Array> {
    let key: string;
    try {
      const s = await stat(path);
      if (!s.isFile()) throw new Error('not a file');
      key = `${path}\n${s.mtimeMs}\n${s.size}`;
    } catch (err) {
      throw new PlayError('no-such-file', `cannot read ${path}: ${(err as Error).message}`);
    }
    const hit = this.memory.get(key);
    if (hit) {
      this.memory.delete(key);
      this.memory.set(key, hit);
      return hit;
    }
    const running = this.inflight.get(key);
    if (running) return running;
    const p = this.decode(path)
      .then((pcm) => {
        this.remember(key, pcm);
        return pcm;
      })
      .finally(() => this.inflight.delete(key));
    this.inflight.set(key, p);
    return p;
  }

  private async decode(path: string): Promise<Int16Array> {
    const direct = readEngineWav(await readFile(path));
    if (direct.ok) return direct.pcm;
    await mkdir(this.o.cacheDir, { recursive: true });
    const tmp = join(this.o.cacheDir, `convert-${process.pid}-${Math.random().toString(36).slice(2)}.wav`);
    try {
      const r = await soxTo8kWav(path, tmp);
      if (r.code !== 0) throw new PlayError('not-audio', `sox could not decode ${path}: ${r.stderr.trim()}`);
      const converted = readEngineWav(await readFile(tmp));
      if (!converted.ok)
        throw new PlayError('not-audio', `conversion of ${path} failed: ${converted.reason}`);
      return converted.pcm;
    } finally {
      await rm(tmp, { force: true });
    }
  }

  private remember(key: string, pcm: Int16Array): void {
    const limit = this.o.memoryBytes ?? MEDIA.PROMPT_MEMORY_BYTES;
    if (pcm.byteLength > limit / 4) return;
    this.memory.set(key, pcm);
    this.memoryBytes += pcm.byteLength;
    for (const [k, v] of this.memory) {
      if (this.memoryBytes <= limit) break;
      this.memory.delete(k);
      this.memoryBytes -= v.byteLength;
    }
  }
}
