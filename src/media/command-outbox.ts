/**
 * Commands on their way to the engine process. Commands issued in one turn of the event loop
 * travel as one IPC message (`EngineBatch`): each message costs a write and a wake-up of the other
 * process, which outweigh the work of most commands. Commands issued while no engine is ready are
 * held for the next one, or handed back to be answered locally when there will be none.
 */
import type { EngineBatch, EngineCommand } from './ipc.js';

/** The running engine's side of the channel. */
export interface EngineChannel {
  /** Whether an engine is ready and connected. */
  canSend(): boolean;
  send(message: EngineCommand | EngineBatch): void;
}

/** This turn's batch and the commands held for the next engine (see the file header). */
export class CommandOutbox {
  /** Held for the (re)started engine. */
  private held: EngineCommand[] = [];
  /** For the running engine, sent together at the end of this turn of the event loop. */
  private batch: EngineCommand[] = [];
  private flushing: NodeJS.Immediate | null = null;

  constructor(private readonly channel: EngineChannel) {}

  /** Batches the command for the running engine, or holds it while none is ready. */
  submit(cmd: EngineCommand): void {
    if (this.channel.canSend()) this.post(cmd);
    else this.held.push(cmd);
  }

  /** Adds a command to this turn's batch for the running engine. */
  post(cmd: EngineCommand): void {
    this.batch.push(cmd);
    this.flushing ??= setImmediate(() => this.flush());
  }

  /** The engine is ready: what was held for it joins this turn's batch, in order. */
  postHeld(): void {
    const held = this.held;
    this.held = [];
    for (const cmd of held) this.post(cmd);
  }

  /**
   * Sends this turn's batch. An engine that went away meanwhile never gets it: the commands are
   * held as if issued after it left (answered locally if it died, sent to the next one if not).
   */
  flush(): void {
    if (this.flushing) clearImmediate(this.flushing);
    this.flushing = null;
    const batch = this.batch;
    if (!batch.length) return;
    this.batch = [];
    if (this.channel.canSend()) {
      this.channel.send(batch.length === 1 ? batch[0]! : (batch satisfies EngineBatch));
    } else this.held.push(...batch);
  }

  /** Sends this turn's batch if it still can, then hands back every command held, in order. */
  takeHeld(): EngineCommand[] {
    this.flush();
    const held = this.held;
    this.held = [];
    return held;
  }
}
