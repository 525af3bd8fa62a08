/**
 * Finished recordings on their way from the engine's spool file to the recording-storage port.
 * The engine writes the WAV; the main process stores it, so that storage (a directory, an object
 * store) is configured in one place and the engine's clock never waits on it. `close()` of the
 * port waits for the uploads still running.
 */
import { readFile, rm } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { RecordingStorage } from '../recordings/storage.js';
import type { EngineMessage } from './ipc.js';
import type { MediaEvent } from './port.js';

/** The engine's report of a recording whose WAV is complete in the spool. */
export type RecordedMessage = Extract<EngineMessage, { kind: 'recorded' }>;
type RecordOutcome = Extract<MediaEvent, { type: 'media.recordDone' | 'media.recordFailed' }>;

/** Uploads of finished recordings in flight (see the file header). */
export class RecordingUploads {
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly storage: RecordingStorage,
    private readonly logger: Logger,
  ) {}

  /**
   * Stores the spooled WAV under the recording sid, then reports `media.recordDone` (or
   * `media.recordFailed` when it could not be stored) through `done`; the spool file is removed
   * either way.
   */
  store(msg: RecordedMessage, done: (e: RecordOutcome) => void): void {
    const p = (async () => {
      try {
        const wav = await readFile(msg.path);
        await this.storage.put(msg.recordingSid, wav);
        done({
          type: 'media.recordDone',
          endpointId: msg.endpointId,
          opId: msg.opId,
          recordingSid: msg.recordingSid,
          durationSeconds: msg.durationSeconds,
          digits: msg.digits,
          reason: msg.reason,
        });
      } catch (err) {
        this.logger.error({ err, recordingSid: msg.recordingSid }, 'recording could not be stored');
        done({
          type: 'media.recordFailed',
          endpointId: msg.endpointId,
          opId: msg.opId,
          recordingSid: msg.recordingSid,
          message: `recording could not be stored: ${(err as Error).message}`,
        });
      } finally {
        await rm(msg.path, { force: true }).catch((err: unknown) =>
          this.logger.warn({ err, path: msg.path }, 'recording spool file not removed'),
        );
      }
    })();
    this.running.add(p);
    void p.finally(() => this.running.delete(p));
  }

  /** Resolves once every upload running now has finished. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }
}
