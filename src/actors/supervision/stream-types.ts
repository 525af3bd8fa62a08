/** The live stream's frames and its subscriber-facing types (live-stream.ts). */
import type { RegistrationEvent } from './registration-view.js';
import type { CallStreamEvent } from './stream-call.js';

/** Frame types, as they appear in `type` on the wire. */
export const StreamEventType = {
  Snapshot: 'snapshot',
  CallCreated: 'call.created',
  CallUpdated: 'call.updated',
  CallEnded: 'call.ended',
  RegistrationChanged: 'registration.changed',
  Metrics: 'metrics',
} as const;

type Unsequenced<T> = T extends unknown ? Omit<T, 'seq'> : never;

/** Every delta, before it is numbered. */
export type StreamDelta = Unsequenced<CallStreamEvent> | RegistrationEvent;

/**
 * What a subscriber is sent: JSON text frames, each one frame object or, for several deltas of
 * one flush window, a JSON array of them in seq order.
 */
export type FrameSink = (frame: string) => void;

/** Which calls a subscriber sees (undefined: every call of the node). */
export type AccountFilter = ReadonlySet<string> | undefined;

export interface Subscription {
  /** The frames to send first, in order: a snapshot, or the missed deltas. */
  readonly initial: readonly string[];
  /** True when `initial` is the replay of the missed deltas rather than a snapshot. */
  readonly resumed: boolean;
  unsubscribe(): void;
}
