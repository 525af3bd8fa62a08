/**
 * The supervisor stream's deltas between the nodes sharing a Redis, so a client connected to any
 * node sees the calls of every node. Messages are opaque text (the stream's own JSON); delivery is
 * at most once (pub/sub): a node that was disconnected misses what was said meanwhile.
 */
export interface StreamRelay {
  /** Sends `message` to every node (this one included). */
  publish(message: string): Promise<void>;
  /** Calls `onMessage` with every message published from now on. */
  subscribe(onMessage: (message: string) => void): Promise<void>;
}
