/**
 * Recording-storage port: where recording audio lives. The default keeps WAV files in a local
 * directory (RECORDINGS_DIR); an object store can implement the same port.
 */
import { createReadStream } from 'node:fs';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { isSid, SidPrefix } from '../ids.js';

export interface RecordingStorage {
  put(sid: string, wav: Buffer): Promise<void>;
  /** Size in bytes, or null when there is no audio for the sid. */
  size(sid: string): Promise<number | null>;
  /** Bytes `start`..`end` inclusive. */
  read(sid: string, start: number, end: number): Readable;
  delete(sid: string): Promise<void>;
}

export class LocalRecordingStorage implements RecordingStorage {
  constructor(private readonly dir: string) {}

  /** Only well-formed recording sids map to files: a path can never leave the directory. */
  private path(sid: string): string {
    if (!isSid(sid, SidPrefix.Recording)) throw new Error(`not a recording sid: ${sid}`);
    return join(this.dir, `${sid}.wav`);
  }

  async put(sid: string, wav: Buffer): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const tmp = `${this.path(sid)}.tmp`;
    await writeFile(tmp, wav);
    await rename(tmp, this.path(sid));
  }

  async size(sid: string): Promise<number | null> {
    try {
      return (await stat(this.path(sid))).size;
    } catch {
      return null;
    }
  }

  read(sid: string, start: number, end: number): Readable {
    return createReadStream(this.path(sid), { start, end });
  }

  async delete(sid: string): Promise<void> {
    await rm(this.path(sid), { force: true });
  }
}
