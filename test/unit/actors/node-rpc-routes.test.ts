/** One NodeRpc serves several services: each view gets only the requests of its kind prefix. */
import { describe, expect, it } from 'vitest';
import { NodeRpcRoutes } from '../../../src/actors/node-rpc-routes.js';
import type { NodeRpc } from '../../../src/store/node-rpc.js';

/** A NodeRpc whose one handler is called directly (serving twice would be a bug: it throws). */
function loopback(): NodeRpc & { deliver(request: unknown): Promise<unknown>; served: number } {
  let handler: ((r: unknown) => Promise<unknown>) | null = null;
  return {
    served: 0,
    async serve(h) {
      if (handler) throw new Error('served twice');
      handler = h;
      this.served++;
    },
    call: async (_node, request) => handler?.(request),
    close: async () => {},
    deliver: (request) => (handler ? handler(request) : Promise.reject(new Error('not serving'))),
  };
}

describe('NodeRpcRoutes', () => {
  it('routes requests by kind prefix over one subscription, and refuses the others', async () => {
    const rpc = loopback();
    const routes = new NodeRpcRoutes(rpc);
    await routes.route('call.').serve(async (r) => ({ calls: r }));
    await routes.route('conference.').serve(async (r) => ({ conferences: r }));
    expect(rpc.served).toBe(1);
    expect(await rpc.deliver({ kind: 'call.command' })).toEqual({ calls: { kind: 'call.command' } });
    expect(await rpc.deliver({ kind: 'conference.get' })).toEqual({
      conferences: { kind: 'conference.get' },
    });
    await expect(rpc.deliver({ kind: 'sms.send' })).rejects.toThrow('unknown request');
    await expect(rpc.deliver('ping')).rejects.toThrow('unknown request');
    await expect(rpc.deliver(null)).rejects.toThrow('unknown request');
  });

  it('calls go straight through', async () => {
    const rpc = loopback();
    const routes = new NodeRpcRoutes(rpc);
    const conf = routes.route('conference.');
    await conf.serve(async () => 'pong');
    expect(await conf.call('node-b', { kind: 'conference.get' }, 100)).toBe('pong');
  });
});
