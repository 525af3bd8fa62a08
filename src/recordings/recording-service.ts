/** Creates and deletes recordings: metadata in the store, audio in the storage port. */
import { newSid, SidPrefix } from '../ids.js';
import type { Recording, RecordingStore } from '../store/recording-store.js';
import type { RecordingStorage } from './storage.js';

export class RecordingService {
  constructor(
    private readonly store: RecordingStore,
    private readonly storage: RecordingStorage,
  ) {}

  /** Stores a finished recording (8 kHz mono WAV) made during `callSid`. */
  async create(input: {
    accountSid: string;
    callSid: string | null;
    durationSeconds: number;
    wav: Buffer;
  }): Promise<Recording> {
    const at = new Date();
    const rec: Recording = {
      sid: newSid(SidPrefix.Recording),
      accountSid: input.accountSid,
      callSid: input.callSid,
      duration: Math.round(input.durationSeconds * 1000) / 1000,
      apiVersion: '2012-04-24',
      sizeBytes: input.wav.length,
      dateCreated: at,
      dateUpdated: at,
    };
    await this.storage.put(rec.sid, input.wav);
    await this.store.insert(rec);
    return rec;
  }

  /**
   * Records the Recording row of audio the media engine already wrote through the storage port
   * under `sid` (a `<Record>` or a recorded `<Dial>`).
   */
  async adopt(input: {
    sid: string;
    accountSid: string;
    callSid: string | null;
    durationSeconds: number;
  }): Promise<Recording> {
    const at = new Date();
    const rec: Recording = {
      sid: input.sid,
      accountSid: input.accountSid,
      callSid: input.callSid,
      duration: Math.round(input.durationSeconds * 1000) / 1000,
      apiVersion: '2012-04-24',
      sizeBytes: (await this.storage.size(input.sid)) ?? 0,
      dateCreated: at,
      dateUpdated: at,
    };
    await this.store.insert(rec);
    return rec;
  }

  async delete(accountSid: string, sid: string): Promise<boolean> {
    const deleted = await this.store.delete(accountSid, sid);
    if (deleted) await this.storage.delete(sid);
    return deleted;
  }
}
