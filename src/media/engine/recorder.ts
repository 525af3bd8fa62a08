/**
 * One running Record: frames arrive once per tick (what the far end sent, or silence when nothing
 * arrived), energy decides silence, and audio is appended to a spool file about once a second so a
 * long recording never sits in memory. Silence at the start is not recorded and silence that ends
 * the recording is trimmed (TwiML Record `trim="trim-silence"`, the default). `finish()` writes the
 * WAV header and closes the file; the main process then stores it through the recording-storage port.
 */
import { type FileHandle, mkdir, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { RecordOptions } from '../port.js';
import { MEDIA } from './constants.js';
import { rms } from './pcm.js';
import { pcmToBytes, wavHeader } from './wav.js';

/** Why a recording ended (the `reason` of `media.recordDone`). */
export type RecordEnd = 'finish-key' | 'silence' | 'max-length' | 'stopped' | 'released';

/**
 * Recycled 20 ms frames. Recorded audio waits up to a couple of seconds before it is spooled, long
 * enough for V8 to promote it to the old generation; allocating a fresh frame per tick per
 * recording therefore fed frequent mark-compact pauses (measured: 2–9 ms every ~0.7 s at 250
 * recordings). Reusing frames keeps the heap flat.
 */
const pool: Int16Array[] = [];
const POOL_MAX = 50_000;

function copyFrame(frame: Int16Array): Int16Array {
  const f = pool.pop() ?? new Int16Array(MEDIA.FRAME_SAMPLES);
  f.set(frame);
  return f;
}

function recycle(frames: Int16Array[]): void {
  for (const f of frames) if (pool.length < POOL_MAX && f.length === MEDIA.FRAME_SAMPLES) pool.push(f);
}

/** One running recording: frames in, a spool WAV out (see the file header). */
export class Recorder {
  /** Samples committed to the recording (spooled or pending). */
  private committed = 0;
  private pending: Int16Array[] = [];
  /** Silent frames after the last voiced one: recorded only if voice follows. */
  private tail: Int16Array[] = [];
  private silentRun = 0;
  private voiced = false;
  private file: Promise<FileHandle> | null = null;
  private writes: Promise<unknown> = Promise.resolve();
  private writeError: Error | null = null;
  private bytesWritten = 0;
  /**
   * Frames per spool write: about a second, jittered per recording so that recordings started on
   * the same tick (a benchmark, a conference) do not all flush on the same tick.
   */
  private readonly flushFrames =
    MEDIA.RECORD_FLUSH_FRAMES + Math.floor(Math.random() * MEDIA.RECORD_FLUSH_FRAMES);
  readonly path: string;

  constructor(
    readonly opId: string,
    readonly opts: RecordOptions,
    spoolDir: string,
  ) {
    // Without trimming, everything from the first frame on is kept (`<Dial record>` from answer).
    this.voiced = opts.trimLeadingSilence === false;
    this.path = join(spoolDir, `${opts.recordingSid}-${opId.replace(/[^\w.-]/g, '_')}.wav`);
  }

  get durationSeconds(): number {
    return this.committed / MEDIA.SAMPLE_RATE;
  }

  /**
   * Adds one 20 ms frame. Returns why the recording ends, or null to continue.
   */
  push(frame: Int16Array): RecordEnd | null {
    const silent = rms(frame) < MEDIA.SILENCE_RMS;
    if (silent) {
      this.silentRun++;
      if (this.voiced) {
        if (this.opts.silenceTimeoutSeconds > 0) this.tail.push(copyFrame(frame));
        else this.commit(copyFrame(frame));
      }
    } else {
      this.silentRun = 0;
      this.voiced = true;
      for (const t of this.tail) this.commit(t);
      this.tail = [];
      this.commit(copyFrame(frame));
    }
    const timeout = this.opts.silenceTimeoutSeconds;
    if (timeout > 0 && this.silentRun * MEDIA.TICK_MS >= timeout * 1000) return 'silence';
    if (
      this.committed + this.tail.length * MEDIA.FRAME_SAMPLES >=
      this.opts.maxLengthSeconds * MEDIA.SAMPLE_RATE
    ) {
      return 'max-length';
    }
    return null;
  }

  private commit(frame: Int16Array): void {
    this.pending.push(frame);
    this.committed += frame.length;
    if (this.pending.length >= this.flushFrames) this.flush();
  }

  private handle(): Promise<FileHandle> {
    this.file ??= (async () => {
      await mkdir(join(this.path, '..'), { recursive: true });
      const fh = await open(this.path, 'w');
      await fh.write(wavHeader(0), 0, 44, 0);
      return fh;
    })();
    return this.file;
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    const frames = this.pending;
    this.pending = [];
    let n = 0;
    for (const f of frames) n += f.length;
    const pcm = new Int16Array(n);
    let o = 0;
    for (const f of frames) {
      pcm.set(f, o);
      o += f.length;
    }
    recycle(frames);
    const bytes = pcmToBytes(pcm);
    this.writes = this.writes.then(async () => {
      if (this.writeError) return;
      try {
        const fh = await this.handle();
        await fh.write(bytes, 0, bytes.length, 44 + this.bytesWritten);
        this.bytesWritten += bytes.length;
      } catch (err) {
        this.writeError = err as Error;
      }
    });
  }

  /** Completes the WAV (trailing silence dropped) and closes it. Rejects if any write failed. */
  async finish(): Promise<{ path: string; durationSeconds: number }> {
    recycle(this.tail);
    this.tail = [];
    this.flush();
    await this.writes;
    const fh = await this.handle();
    try {
      if (this.writeError) throw this.writeError;
      await fh.write(wavHeader(this.bytesWritten), 0, 44, 0);
    } finally {
      await fh.close();
    }
    return { path: this.path, durationSeconds: this.bytesWritten / 2 / MEDIA.SAMPLE_RATE };
  }

  /** Deletes the spool file (engine shutting down without a main process to hand it to). */
  async discard(): Promise<void> {
    await this.writes;
    if (this.file) await (await this.file).close().catch(() => {});
    await rm(this.path, { force: true });
  }
}
