/**
 * What the engine's parts share: the endpoints by the caller's id, the settings, and the way back
 * to the main process. One map of endpoints for every part, so that creation, operations, links
 * and the clock always see the same set.
 */
import type { Logger } from 'pino';
import type { EngineMessage, EngineSettings } from '../ipc.js';
import type { MediaEvent } from '../port.js';
import type { Endpoint } from './endpoint.js';

export interface EngineContext {
  readonly endpoints: Map<string, Endpoint>;
  readonly settings: EngineSettings;
  readonly logger: Logger;
  /** Sends one message to the main process. */
  readonly send: (msg: EngineMessage) => void;
  /** Sends one `MediaEvent` to the main process. */
  readonly emit: (event: MediaEvent) => void;
}
