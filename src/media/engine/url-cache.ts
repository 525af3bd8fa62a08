/**
 * Play-URL download cache. Audio is fetched with a size cap (Content-Length checked before the
 * body, bytes counted while streaming), converted to 8 kHz mono WAV by sox unless it already is one,
 * and kept on disk keyed by URL + validator (ETag, else Last-Modified). Each play revalidates with a conditional GET
 * (RFC 9110 §13.1: If-None-Match / If-Modified-Since); 304 reuses the file, a fetch error falls
 * back to a cached copy. The directory is bounded to `maxBytes`, least recently used evicted first.
 * Requests go through `httpGet` (SSRF policy, pinned addresses, bounded redirects).
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { MediaSettings, PlayUrlPolicy } from '../settings.js';
import { MEDIA } from './constants.js';
import { soxTo8kWav } from './convert.js';
import { PlayError } from './errors.js';
import { type HttpResponse, httpGet } from './http-get.js';
import { readEngineWav } from './wav.js';

interface Entry {
  readonly url: string;
  readonly key: string;
  readonly etag: string | null;
  readonly lastModified: string | null;
  readonly bytes: number;
  lastUsed: number;
}

/** Directory, byte bounds, URL policy and logger of a `UrlCache`. */
export interface UrlCacheOptions extends Pick<MediaSettings, 'maxDownloadBytes'>, PlayUrlPolicy {
  /** The cache's own directory (under `MediaSettings.cacheDir`). */
  readonly dir: string;
  /** Bound on the directory (`MediaSettings.cacheMaxBytes`). */
  readonly maxBytes: number;
  readonly logger: Logger;
}

/** Content types that are certainly not audio: refused before the body is read. */
const NOT_AUDIO = /^(text\/|image\/|video\/|application\/(json|xml|xhtml\+xml|javascript|pdf|zip))/i;

/** The sox input type for a downloaded file, from its magic bytes, else from its Content-Type. */
export function sniffAudioType(head: Uint8Array, contentType: string | null): string | null {
  const ascii = Buffer.from(head.subarray(0, 12)).toString('latin1');
  if (ascii.startsWith('RIFF') && ascii.slice(8, 12) === 'WAVE') return 'wav';
  if (ascii.startsWith('ID3') || (head[0] === 0xff && ((head[1] ?? 0) & 0xe0) === 0xe0)) return 'mp3';
  if (ascii.startsWith('OggS')) return 'ogg';
  if (ascii.startsWith('fLaC')) return 'flac';
  if (ascii.startsWith('.snd')) return 'au';
  if (ascii.startsWith('FORM')) return 'aiff';
  const ct = (contentType ?? '').toLowerCase();
  if (ct.includes('basic') || ct.includes('ulaw') || ct.includes('mulaw')) return 'ul';
  return null;
}

/** Largest download checked for being in the engine's format already (it is read whole). */
const DIRECT_WAV_MAX_BYTES = 16 * 1024 * 1024;

/** Whether a downloaded WAV is already 8 kHz mono PCM/G.711 (no conversion needed). */
async function isEngineWav(path: string): Promise<boolean> {
  if ((await stat(path)).size > DIRECT_WAV_MAX_BYTES) return false;
  return readEngineWav(await readFile(path)).ok;
}

/** Downloads, converts and caches Play URLs (see the file header). */
export class UrlCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<string>>();
  private loaded: Promise<void> | null = null;

  constructor(private readonly o: UrlCacheOptions) {}

  /** Path of an 8 kHz WAV for `url`, downloading and converting when needed. */
  get(url: string): Promise<string> {
    const running = this.inflight.get(url);
    if (running) return running;
    const p = this.fetchAndConvert(url).finally(() => this.inflight.delete(url));
    this.inflight.set(url, p);
    return p;
  }

  /** Total bytes of the converted files kept. */
  get totalBytes(): number {
    let n = 0;
    for (const e of this.entries.values()) n += e.bytes;
    return n;
  }

  private wavPath(key: string): string {
    return join(this.o.dir, `${key}.wav`);
  }

  private load(): Promise<void> {
    this.loaded ??= (async () => {
      await mkdir(this.o.dir, { recursive: true });
      for (const name of await readdir(this.o.dir)) {
        if (!name.endsWith('.json')) continue;
        try {
          const e = JSON.parse(await readFile(join(this.o.dir, name), 'utf8')) as Entry;
          await stat(this.wavPath(e.key));
          this.entries.set(e.url, e);
        } catch {
          await rm(join(this.o.dir, name), { force: true });
        }
      }
    })();
    return this.loaded;
  }

  private async fetchAndConvert(url: string): Promise<string> {
    await this.load();
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new PlayError('fetch-failed', `not a URL: ${url}`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new PlayError('fetch-failed', `unsupported scheme ${parsed.protocol}`);
    }
    const cached = this.entries.get(url);
    const headers: Record<string, string> = {};
    if (cached?.etag) headers['if-none-match'] = cached.etag;
    else if (cached?.lastModified) headers['if-modified-since'] = cached.lastModified;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.o.urlTimeoutMs ?? MEDIA.FETCH_TIMEOUT_MS);
    try {
      let res: HttpResponse;
      try {
        res = await httpGet(parsed, {
          headers,
          signal: controller.signal,
          blockPrivate: this.o.blockPrivateUrls,
        });
      } catch (err) {
        const policy = err instanceof PlayError && err.message.includes('URL policy');
        if (cached && !policy)
          return this.use(cached, `fetch failed, using cached copy: ${(err as Error).message}`);
        throw err;
      }
      if (res.status === 304 && cached) {
        res.body.destroy();
        return this.use(cached);
      }
      if (res.status < 200 || res.status > 299) {
        res.body.destroy();
        if (cached && res.status >= 500) return this.use(cached, `HTTP ${res.status}, using cached copy`);
        throw new PlayError('fetch-failed', `HTTP ${res.status} from ${url}`);
      }
      const contentType = res.header('content-type');
      if (contentType && NOT_AUDIO.test(contentType)) {
        res.body.destroy();
        throw new PlayError('not-audio', `Content-Type ${contentType} is not audio`);
      }
      const declared = Number(res.header('content-length') ?? Number.NaN);
      if (Number.isFinite(declared) && declared > this.o.maxDownloadBytes) {
        res.body.destroy();
        throw new PlayError(
          'too-large',
          `Content-Length ${declared} exceeds the ${this.o.maxDownloadBytes}-byte download limit`,
        );
      }
      return await this.store(url, res, contentType);
    } finally {
      clearTimeout(timer);
    }
  }

  private async store(url: string, res: HttpResponse, contentType: string | null): Promise<string> {
    const etag = res.header('etag');
    const lastModified = res.header('last-modified');
    const key = createHash('sha256')
      .update(`${url}\n${etag ?? lastModified ?? ''}`)
      .digest('hex');
    const nonce = `${process.pid}-${Math.random().toString(36).slice(2)}`;
    const download = join(this.o.dir, `${key}.${nonce}.download`);
    const converted = join(this.o.dir, `${key}.${nonce}.tmp.wav`);
    try {
      await this.download(res, download);
      const fh = await open(download, 'r');
      const head = new Uint8Array(12);
      await fh.read(head, 0, 12, 0);
      await fh.close();
      const type = sniffAudioType(head, contentType);
      if (!type) throw new PlayError('not-audio', `${url} is not a recognised audio format`);
      if (type === 'wav' && (await isEngineWav(download))) {
        // Already 8 kHz mono: kept as downloaded, so such prompts play even where sox is missing.
        await rename(download, converted);
      } else {
        const r = await soxTo8kWav(download, converted, type);
        if (r.code !== 0) throw new PlayError('not-audio', `sox could not decode ${url}: ${r.stderr.trim()}`);
      }
      const bytes = (await stat(converted)).size;
      await rename(converted, this.wavPath(key));
      const previous = this.entries.get(url);
      const entry: Entry = { url, key, etag, lastModified, bytes, lastUsed: Date.now() };
      this.entries.set(url, entry);
      await writeFile(join(this.o.dir, `${key}.json`), JSON.stringify(entry));
      if (previous && previous.key !== key) await this.remove(previous);
      await this.evict(url);
      return this.wavPath(key);
    } finally {
      await rm(download, { force: true });
      await rm(converted, { force: true });
    }
  }

  private async download(res: HttpResponse, path: string): Promise<void> {
    const out = createWriteStream(path);
    let bytes = 0;
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        bytes += chunk.length;
        if (bytes > this.o.maxDownloadBytes) {
          res.body.destroy();
          throw new PlayError('too-large', `download exceeds the ${this.o.maxDownloadBytes}-byte limit`);
        }
        if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
      }
    } catch (err) {
      if (err instanceof PlayError) throw err;
      throw new PlayError('fetch-failed', `download failed: ${(err as Error).message}`, { cause: err });
    } finally {
      await new Promise<void>((r) => out.end(r));
    }
    if (bytes === 0) throw new PlayError('not-audio', 'empty body');
  }

  private use(entry: Entry, note?: string): string {
    if (note) this.o.logger.warn({ url: entry.url }, note);
    entry.lastUsed = Date.now();
    return this.wavPath(entry.key);
  }

  private async remove(entry: Entry): Promise<void> {
    await rm(this.wavPath(entry.key), { force: true });
    await rm(join(this.o.dir, `${entry.key}.json`), { force: true });
  }

  /** Drops least recently used entries until the cache fits; never the one just stored. */
  private async evict(keep: string): Promise<void> {
    let total = this.totalBytes;
    const byAge = [...this.entries.values()].sort((a, b) => a.lastUsed - b.lastUsed);
    for (const e of byAge) {
      if (total <= this.o.maxBytes) break;
      if (e.url === keep) continue;
      this.entries.delete(e.url);
      total -= e.bytes;
      await this.remove(e);
    }
  }
}
