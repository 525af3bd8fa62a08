/**
 * `EngineLedger`: what the main process knows the engine holds — endpoints (being created or
 * ready), operations in flight (play, collect, record) and endpoints given up — so that the port's
 * guarantees hold when the engine cannot keep them itself. When the engine dies, is closed, or a
 * message about an endpoint cannot be handled, the ledger emits the terminal events the engine
 * would have sent (exactly one per operation, `media.endpointLost` / `media.endpointFailed` per
 * endpoint), and it answers commands that never reach an engine.
 */
import type { EngineCommand } from './ipc.js';
import type { MediaEvent } from './port.js';

type PendingKind = 'play' | 'collect' | 'record';

/** An operation the engine was asked to run and has not finished. */
export interface PendingOp {
  readonly kind: PendingKind;
  readonly endpointId: string;
  readonly recordingSid?: string;
  /** The engine finished the recording; the main process is storing it. */
  storing?: boolean;
}

/** Bookkeeping of the engine's endpoints and operations (see the file header). */
export class EngineLedger {
  /** Endpoints the engine holds (or is creating), for `media.endpointLost` on a crash. */
  private readonly endpoints = new Map<string, 'creating' | 'ready'>();
  private readonly ops = new Map<string, PendingOp>();
  /** Endpoints given up after a message about them could not be handled: later engine events are dropped. */
  private readonly abandoned = new Set<string>();

  /** `dispatch` delivers the events the ledger makes up; it must not throw. */
  constructor(private readonly dispatch: (e: MediaEvent) => void) {}

  /** Endpoints held or being created. */
  get endpointCount(): number {
    return this.endpoints.size;
  }

  /** A create was issued for an endpoint not yet known. */
  endpointCreating(endpointId: string): void {
    if (!this.endpoints.has(endpointId)) this.endpoints.set(endpointId, 'creating');
  }

  /** An operation was issued; it is in flight until its terminal event. */
  opStarted(opId: string, op: PendingOp): void {
    this.ops.set(opId, op);
  }

  /** The engine handed over a finished recording: only its storage is left, which ends on its own. */
  opStoring(opId: string): void {
    const op = this.ops.get(opId);
    if (op) op.storing = true;
  }

  /** The operation's terminal event is being delivered. */
  opEnded(opId: string): void {
    this.ops.delete(opId);
  }

  /**
   * Records what an engine event means for the bookkeeping. False when the event must be dropped:
   * its endpoint was already reported lost, so the engine's own later events for it would be a
   * second ending.
   */
  accept(e: MediaEvent): boolean {
    const id = e.type === 'media.endpointReady' ? e.endpoint.endpointId : e.endpointId;
    if (this.abandoned.has(id)) {
      if (e.type === 'media.released') this.abandoned.delete(id);
      return false;
    }
    switch (e.type) {
      case 'media.endpointReady':
        this.endpoints.set(e.endpoint.endpointId, 'ready');
        break;
      case 'media.endpointFailed':
        // A failed create leaves nothing behind; a failed re-negotiation keeps the endpoint.
        if (this.endpoints.get(e.endpointId) === 'creating') this.endpoints.delete(e.endpointId);
        break;
      case 'media.released':
        this.endpoints.delete(e.endpointId);
        break;
      case 'media.playDone':
      case 'media.playFailed':
      case 'media.collectDone':
      case 'media.recordFailed':
        this.ops.delete(e.opId);
        break;
      default:
        break;
    }
    return true;
  }

  /**
   * Ends the operations in flight that `which` selects with their terminal event (a recording being
   * stored finishes on its own and is left alone).
   */
  private endOperations(which: (op: PendingOp) => boolean, reason: string): void {
    for (const [opId, op] of this.ops) {
      if (op.storing || !which(op)) continue;
      this.ops.delete(opId);
      const endpointId = op.endpointId;
      if (op.kind === 'play') {
        this.dispatch({ type: 'media.playFailed', endpointId, opId, reason: 'engine-down', message: reason });
      } else if (op.kind === 'collect') {
        this.dispatch({ type: 'media.collectDone', endpointId, opId, digits: '', reason: 'lost' });
      } else {
        this.dispatch({
          type: 'media.recordFailed',
          endpointId,
          opId,
          recordingSid: op.recordingSid ?? '',
          message: reason,
        });
      }
    }
  }

  /** The engine is gone: every operation in flight ends, then every endpoint is reported lost. */
  loseAll(reason: string): void {
    this.endOperations(() => true, reason);
    const lost = [...this.endpoints.keys()];
    this.endpoints.clear();
    for (const endpointId of lost) this.dispatch({ type: 'media.endpointLost', endpointId, reason });
  }

  /**
   * Terminal events for one endpoint and its operations. True when the engine holds the endpoint
   * and should be told to release it; its later events are dropped until it reports the release.
   */
  abandon(endpointId: string, reason: string): boolean {
    if (this.abandoned.has(endpointId)) return false;
    this.endOperations((op) => op.endpointId === endpointId, reason);
    const state = this.endpoints.get(endpointId);
    this.endpoints.delete(endpointId);
    if (state === undefined) return false;
    this.abandoned.add(endpointId);
    if (state === 'creating') {
      this.dispatch({ type: 'media.endpointFailed', endpointId, reason: 'engine-down', message: reason });
    } else {
      this.dispatch({ type: 'media.endpointLost', endpointId, reason });
    }
    return true;
  }

  /** Terminal events for a command no engine will run (the contract: commands never throw). */
  refuse(cmd: EngineCommand, message: string): void {
    switch (cmd.op) {
      case 'create':
      case 'applySdp':
        if (cmd.op === 'create') this.endpoints.delete(cmd.endpointId);
        this.dispatch({
          type: 'media.endpointFailed',
          endpointId: cmd.endpointId,
          reason: 'engine-down',
          message,
        });
        return;
      case 'play':
        this.ops.delete(cmd.opId);
        this.dispatch({
          type: 'media.playFailed',
          endpointId: cmd.endpointId,
          opId: cmd.opId,
          reason: 'engine-down',
          message,
        });
        return;
      case 'collect':
        this.ops.delete(cmd.opId);
        this.dispatch({
          type: 'media.collectDone',
          endpointId: cmd.endpointId,
          opId: cmd.opId,
          digits: '',
          reason: 'lost',
        });
        return;
      case 'record':
        this.ops.delete(cmd.opId);
        this.dispatch({
          type: 'media.recordFailed',
          endpointId: cmd.endpointId,
          opId: cmd.opId,
          recordingSid: cmd.opts.recordingSid,
          message,
        });
        return;
      case 'release':
        this.endpoints.delete(cmd.endpointId);
        this.dispatch({ type: 'media.released', endpointId: cmd.endpointId });
        return;
      default:
        return;
    }
  }
}
