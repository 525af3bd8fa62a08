/**
 * Starting the engine process: `engine/entry.ts` forked with the JSON IPC serialization, at the
 * scheduling priority asked for, and its settings sent as the first message. Every message is plain
 * data (ipc.ts: strings, finite numbers, booleans, arrays, objects), and JSON costs about a third of
 * the advanced (V8) serialization per message, on both sides: a call's endpoint is created and
 * released with four messages. Supervision (restarts, what a death means for the calls)
 * is `MediaEngine`'s.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { setPriority } from 'node:os';
import type { Logger } from 'pino';
import type { EngineCommand, EngineSettings } from './ipc.js';

/** The engine's entry beside this module: `.js` in the build (`npm run build`), `.ts` under tsx. */
const COMPILED = import.meta.url.endsWith('.js');
const ENTRY = new URL(COMPILED ? './engine/entry.js' : './engine/entry.ts', import.meta.url);

export interface ForkEngineOptions {
  readonly settings: EngineSettings;
  readonly logger: Logger;
  /** Nice value for the engine process (see `MediaEngineOptions.priority`). */
  readonly priority?: number;
  /** Extra Node flags for the engine process. */
  readonly execArgv?: readonly string[];
  /** Called for every message the engine sends (one command's reply or a batch of them). */
  readonly onMessage: (message: unknown) => void;
  /** Called once when the process has exited. */
  readonly onExit: (code: number | null, signal: string | null) => void;
}

/** Forks the engine process; `init` with the settings is its first message. */
export function forkEngine(o: ForkEngineOptions): ChildProcess {
  const child = fork(ENTRY, [], {
    execArgv: [...(COMPILED ? [] : ['--import', 'tsx']), ...(o.execArgv ?? [])],
    serialization: 'json',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  child.on('message', o.onMessage);
  child.on('error', (err) => o.logger.error({ err }, 'media engine process error'));
  child.on('exit', o.onExit);
  if (o.priority !== undefined && child.pid !== undefined) {
    try {
      setPriority(child.pid, o.priority);
    } catch (err) {
      o.logger.warn({ err, priority: o.priority }, 'cannot set the media engine priority');
    }
  }
  child.send({ op: 'init', settings: o.settings } satisfies EngineCommand);
  return child;
}
