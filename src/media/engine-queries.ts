/**
 * Questions to the engine process that have an answer (an endpoint's stats, the engine's load).
 * Each carries a request id that the reply echoes. A reply that does not come in time, or an
 * engine that goes away first, resolves as unknown (null): the askers are metrics scrapes and REST
 * reads, which must not hang on a busy or dead engine.
 */
import type { EngineLoadReport, EngineMessage } from './ipc.js';

/** The engine's replies to queries. */
export type EngineReply = Extract<EngineMessage, { kind: 'stats' | 'load' }>;

/** The load reported while no engine answers: nothing measured, so zeros. */
export const NO_LOAD: EngineLoadReport = Object.freeze({
  endpoints: 0,
  tickLateP50Ms: 0,
  tickLateP99Ms: 0,
  tickLateMaxMs: 0,
  tickWorkP50Ms: 0,
  tickWorkP99Ms: 0,
  tickWorkMaxMs: 0,
  cpuPercent: 0,
  rssBytes: 0,
  ticks: 0,
  skippedTicks: 0,
});

/** Queries waiting for the engine's reply (see the file header). */
export class EngineQueries {
  private readonly waiting = new Map<number, (reply: EngineReply | null) => void>();
  private reqId = 0;

  constructor(private readonly timeoutMs: number) {}

  /** Sends a query through `send` under a fresh request id; resolves with the reply, or null. */
  ask<T extends EngineReply>(send: (reqId: number) => void): Promise<T | null> {
    const reqId = ++this.reqId;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(reqId);
        resolve(null);
      }, this.timeoutMs);
      this.waiting.set(reqId, (reply) => {
        clearTimeout(timer);
        resolve(reply as T | null);
      });
      send(reqId);
    });
  }

  /** A reply from the engine (one nobody waits for any more is ignored). */
  answer(reply: EngineReply): void {
    const q = this.waiting.get(reply.reqId);
    this.waiting.delete(reply.reqId);
    q?.(reply);
  }

  /** The engine is gone: every query waiting resolves as unknown. */
  abandonAll(): void {
    for (const q of this.waiting.values()) q(null);
    this.waiting.clear();
  }
}
