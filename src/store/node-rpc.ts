/**
 * Request/reply between the nodes that share a Redis: a node asks a named node (the owner of a live
 * call, say) to do something and gets its answer, or a timeout. Payloads are JSON values.
 */
export interface NodeRpc {
  /** Serves requests addressed to this node; one handler per node. */
  serve(handler: (request: unknown) => Promise<unknown>): Promise<void>;
  /** Sends `request` to `node`; rejects with NodeRpcTimeout when no answer comes within `timeoutMs`. */
  call(node: string, request: unknown, timeoutMs: number): Promise<unknown>;
  close(): Promise<void>;
}

/** The addressed node did not answer in time (dead, partitioned, or overloaded). */
export class NodeRpcTimeout extends Error {
  override readonly name = 'NodeRpcTimeout';
}

/** The addressed node answered that its handler failed. */
export class NodeRpcFailed extends Error {
  override readonly name = 'NodeRpcFailed';
}
