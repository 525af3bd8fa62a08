/**
 * Entry point of the media engine process, forked by `MediaEngine` (src/media/media-engine.ts).
 * Waits for `init`, starts the engine and its clock, reports `ready`, then serves commands until
 * `shutdown` or until the parent goes away.
 */
import { createSecureContext, rootCertificates } from 'node:tls';
import { createLogger } from '../../logger.js';
import type { EngineCommand, EngineMessage } from '../ipc.js';
import { Engine } from './engine.js';
import { opusBackend } from './webrtc/opus.js';

let engine: Engine | null = null;

/**
 * Work Node does lazily on first use, done before the clock starts rather than during the first
 * https Play URL: the TLS root store and a default secure context.
 */
function warmUp(): void {
  try {
    createSecureContext();
    void rootCertificates.length;
  } catch {
    // Not fatal: the first https URL would just pay the cost.
  }
}

/** Messages of this turn of the event loop, sent together (one IPC write and wake-up, not one each). */
let outbox: EngineMessage[] = [];
let flushing: NodeJS.Immediate | null = null;

function flush(): void {
  if (flushing) clearImmediate(flushing);
  flushing = null;
  const batch = outbox;
  outbox = [];
  if (batch.length && process.connected) process.send?.(batch.length === 1 ? batch[0] : batch);
}

function send(msg: EngineMessage): void {
  outbox.push(msg);
  flushing ??= setImmediate(flush);
}

process.on('message', (raw: unknown) => {
  // One command, or a batch of them (EngineBatch) in order.
  if (Array.isArray(raw)) for (const one of raw) onCommand(one as EngineCommand);
  else onCommand(raw as EngineCommand);
});

function onCommand(cmd: EngineCommand): void {
  if (cmd.op === 'init') {
    if (engine) return;
    const logger = createLogger(cmd.settings.logLevel, 'media-engine');
    engine = new Engine(cmd.settings, send, logger);
    warmUp();
    // Chosen (and the addon loaded) before the clock starts, not on the first WebRTC leg.
    const opus = opusBackend();
    engine.start();
    logger.info(
      { pid: process.pid, rtpHost: cmd.settings.rtpHost, opus: opus.backend.name },
      'media engine started',
    );
    if (opus.fallbackReason)
      logger.warn({ reason: opus.fallbackReason }, 'native Opus not loaded: using WebAssembly');
    send({ kind: 'ready' });
    return;
  }
  if (cmd.op === 'shutdown') {
    void (engine?.shutdown() ?? Promise.resolve()).finally(() => {
      // Messages are written in order: once `closed` is out, every event before it is too.
      flush();
      if (!process.connected) return;
      process.send?.({ kind: 'closed' } satisfies EngineMessage, undefined, {}, () => process.disconnect?.());
    });
    return;
  }
  engine?.handle(cmd);
}

// The parent is gone (crashed or closed the channel): nothing else can use us.
process.on('disconnect', () => {
  process.exit(0);
});
