/**
 * A media engine for the engine benchmarks (bench:media, bench:webrtc): loopback RTP on the given
 * port range, a cache and recording spool in a fresh temp dir (`root`, also for the bench's own
 * files), warn-level logs.
 * BENCH_ENGINE_ARGS passes Node flags to the engine process (e.g. "--cpu-prof --cpu-prof-dir=/tmp/p");
 * BENCH_PRIORITY sets its nice value (e.g. -10 to run it above the load generator).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { newSid, SidPrefix } from '../../src/ids.js';
import { MediaEngine } from '../../src/media/media-engine.js';
import { LocalRecordingStorage } from '../../src/recordings/storage.js';

export async function startBenchEngine(
  name: string,
  ports: { readonly min: number; readonly max: number },
): Promise<{ engine: MediaEngine; root: string; dispose: () => Promise<void> }> {
  const root = await mkdtemp(join(tmpdir(), `bench-${name}-`));
  const engine = new MediaEngine({
    media: {
      rtpHost: '127.0.0.1',
      rtpPortMin: ports.min,
      rtpPortMax: ports.max,
      cacheDir: join(root, 'cache'),
      cacheMaxBytes: 64 * 1024 * 1024,
      maxDownloadBytes: 10 * 1024 * 1024,
    },
    storage: new LocalRecordingStorage(join(root, 'recordings')),
    logger: pino({ level: 'warn' }),
    engineLogLevel: 'warn',
    priority: process.env.BENCH_PRIORITY === undefined ? undefined : Number(process.env.BENCH_PRIORITY),
    engineExecArgv: (process.env.BENCH_ENGINE_ARGS ?? '').split(' ').filter(Boolean),
  });
  return {
    engine,
    root,
    dispose: async () => {
      await engine.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/**
 * Every endpoint plays a prompt in a loop and records what its peer sends, as a busy IVR would:
 * the same `prompt` file for all, or endpoint i's own file `prompt(i)`.
 */
export function playAndRecord(
  engine: Pick<MediaEngine, 'play' | 'record'>,
  ids: readonly string[],
  prompt: string | ((i: number) => string),
) {
  for (const [i, id] of ids.entries()) {
    const path = typeof prompt === 'string' ? prompt : prompt(i);
    engine.play(id, `${id}:play`, { kind: 'file', path }, { loop: 0 });
    engine.record(id, `${id}:rec`, {
      recordingSid: newSid(SidPrefix.Recording),
      maxLengthSeconds: 3600,
      silenceTimeoutSeconds: 0,
      finishOnKey: '',
      playBeep: false,
    });
  }
}
