/**
 * The IPC protocol between the main process (`MediaEngine`) and the engine process
 * (`engine/entry.ts`). Messages travel over the fork channel as JSON (`serialization: 'json'`): plain data only.
 */
import type {
  Codec,
  CollectOptions,
  ConferenceJoinOptions,
  EndpointStats,
  MediaEvent,
  PlayOptions,
  PlaySource,
  RecordOptions,
} from './port.js';
import type { MediaSettings, PlayUrlPolicy } from './settings.js';

/** Settings the engine receives once, before it reports `ready`. */
export interface EngineSettings extends MediaSettings, PlayUrlPolicy {
  /** Where recordings are written while they run (handed to the main process when done). */
  readonly spoolDir: string;
  readonly logLevel: string;
}

/** Main → engine. */
export type EngineCommand =
  | { readonly op: 'init'; readonly settings: EngineSettings }
  | {
      readonly op: 'create';
      readonly endpointId: string;
      readonly remoteSdp?: string;
      readonly codecs?: readonly Codec[];
      readonly webrtc?: boolean;
    }
  | { readonly op: 'applySdp'; readonly endpointId: string; readonly sdp: string }
  | {
      readonly op: 'play';
      readonly endpointId: string;
      readonly opId: string;
      readonly source: PlaySource;
      readonly opts: PlayOptions;
    }
  | {
      readonly op: 'collect';
      readonly endpointId: string;
      readonly opId: string;
      readonly opts: CollectOptions;
    }
  | {
      readonly op: 'record';
      readonly endpointId: string;
      readonly opId: string;
      readonly opts: RecordOptions;
    }
  | { readonly op: 'stop'; readonly endpointId: string }
  | { readonly op: 'bridge'; readonly a: string; readonly b: string }
  | { readonly op: 'unbridge'; readonly a: string; readonly b: string }
  | { readonly op: 'confJoin'; readonly endpointId: string; readonly opts: ConferenceJoinOptions }
  | { readonly op: 'confLeave'; readonly endpointId: string }
  | { readonly op: 'mute'; readonly endpointId: string; readonly muted: boolean }
  | { readonly op: 'release'; readonly endpointId: string }
  | { readonly op: 'stats'; readonly reqId: number; readonly endpointId: string }
  | { readonly op: 'load'; readonly reqId: number }
  | { readonly op: 'shutdown' };

/**
 * Commands issued in one turn of the main process's event loop, in one IPC message, handled in
 * order (a single command travels on its own). The engine batches its messages the same way.
 */
export type EngineBatch = readonly EngineCommand[];

/** Engine-wide load as measured in the engine (restarts are added by the main process). */
export interface EngineLoadReport {
  readonly endpoints: number;
  readonly tickLateP50Ms: number;
  readonly tickLateP99Ms: number;
  readonly tickLateMaxMs: number;
  /** Time spent inside one tick (every endpoint's work), percentiles over the window. */
  readonly tickWorkP50Ms: number;
  readonly tickWorkP99Ms: number;
  readonly tickWorkMaxMs: number;
  readonly cpuPercent: number;
  readonly rssBytes: number;
  readonly ticks: number;
  readonly skippedTicks: number;
}

/** Engine → main. */
export type EngineMessage =
  | { readonly kind: 'ready' }
  /** Sent last on shutdown, after every endpoint's events: the channel can close. */
  | { readonly kind: 'closed' }
  | { readonly kind: 'event'; readonly event: MediaEvent }
  /**
   * A recording finished and its WAV is complete in the spool file; the main process stores it
   * through the recording-storage port, then emits `media.recordDone` (or `media.recordFailed`).
   */
  | {
      readonly kind: 'recorded';
      readonly endpointId: string;
      readonly opId: string;
      readonly recordingSid: string;
      readonly path: string;
      readonly durationSeconds: number;
      readonly digits: string;
      readonly reason: 'finish-key' | 'silence' | 'max-length' | 'stopped' | 'released';
    }
  | { readonly kind: 'stats'; readonly reqId: number; readonly stats: EndpointStats | null }
  | { readonly kind: 'load'; readonly reqId: number; readonly load: EngineLoadReport };

/** The endpoint an engine message concerns, read defensively (the message may be malformed). */
export function endpointOfMessage(raw: unknown): string | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const m = raw as {
    endpointId?: unknown;
    event?: { endpointId?: unknown; endpoint?: { endpointId?: unknown } };
  };
  const id = m.endpointId ?? m.event?.endpointId ?? m.event?.endpoint?.endpointId;
  return typeof id === 'string' ? id : null;
}
