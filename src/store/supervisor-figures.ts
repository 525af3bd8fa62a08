/**
 * Each node's supervisor figures, shared through Redis so any node can answer for the cluster
 * (Supervisor `Scope=cluster`). A node publishes its counters and gauges every few seconds with an
 * expiry; a node that stops publishing (stopped or dead) drops out once its figures expire.
 */

/** One node's published figures: integer members only (counters, gauges, duration sums and counts). */
export interface NodeFigures {
  readonly instanceId: string;
  /** When they were taken (epoch ms). */
  readonly at: number;
  readonly figures: Readonly<Record<string, number>>;
}

export interface SupervisorFigureStore {
  /** Replaces the node's figures; they count until `at + ttlMs`. */
  publish(node: NodeFigures, ttlMs: number): Promise<void>;
  /** The figures of every node whose last publication has not expired, by instance id. */
  list(): Promise<NodeFigures[]>;
  /** Withdraws the node's figures (it is shutting down). */
  remove(instanceId: string): Promise<void>;
}
