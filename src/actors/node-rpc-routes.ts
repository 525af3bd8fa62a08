/**
 * One NodeRpc, several services: a node serves one request handler (NodeRpc.serve), so the call
 * commands and the conferences each get a view that serves only the requests whose `kind` starts
 * with their prefix (`call.`, `conference.`). Calls go straight through.
 */
import type { NodeRpc } from '../store/node-rpc.js';

type Handler = (request: unknown) => Promise<unknown>;

const kindOf = (r: unknown): string =>
  typeof r === 'object' && r !== null && typeof (r as { kind?: unknown }).kind === 'string'
    ? (r as { kind: string }).kind
    : '';

export class NodeRpcRoutes {
  private readonly handlers: Array<{ readonly prefix: string; readonly handler: Handler }> = [];
  private serving: Promise<void> | null = null;

  constructor(private readonly rpc: NodeRpc) {}

  /** A NodeRpc whose `serve` receives only the requests of kind `prefix…`. */
  route(prefix: string): NodeRpc {
    return {
      serve: (handler) => {
        this.handlers.push({ prefix, handler });
        this.serving ??= this.rpc.serve((request) => this.dispatch(request));
        return this.serving;
      },
      call: (node, request, timeoutMs) => this.rpc.call(node, request, timeoutMs),
      close: async () => {},
    };
  }

  private dispatch(request: unknown): Promise<unknown> {
    const kind = kindOf(request);
    const route = this.handlers.find((h) => kind.startsWith(h.prefix));
    if (!route) return Promise.reject(new Error('unknown request'));
    return route.handler(request);
  }
}
