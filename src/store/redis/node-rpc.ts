/**
 * NodeRpc over Redis pub/sub: each node listens on its own request channel and its own reply
 * channel; a request carries an id and the asking node's name, the reply comes back on that node's
 * reply channel. Two subscriptions per node, whatever the traffic.
 */
import { randomUUID } from 'node:crypto';
import { type NodeRpc, NodeRpcFailed, NodeRpcTimeout } from '../node-rpc.js';
import { isRedisCluster, type Redis } from './client.js';
import type { RedisKeys } from './keys.js';

interface RequestFrame {
  readonly id: string;
  readonly from: string;
  readonly body: unknown;
}

interface ReplyFrame {
  readonly id: string;
  readonly ok: boolean;
  readonly body: unknown;
}

export class RedisNodeRpc implements NodeRpc {
  private readonly pending = new Map<
    string,
    { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }
  >();
  private listening = false;

  constructor(
    private readonly pub: Redis,
    private readonly sub: Redis,
    private readonly keys: RedisKeys,
    private readonly self: string,
  ) {}

  private async listenForReplies(): Promise<void> {
    if (this.listening) return;
    this.listening = true;
    await this.sub.subscribe(this.keys.nodeReplies(this.self), (message) => {
      let frame: ReplyFrame;
      try {
        frame = JSON.parse(message) as ReplyFrame;
      } catch {
        return;
      }
      const waiter = this.pending.get(frame.id);
      if (!waiter) return; // timed out already
      this.pending.delete(frame.id);
      clearTimeout(waiter.timer);
      if (frame.ok) waiter.resolve(frame.body);
      else waiter.reject(new NodeRpcFailed(String(frame.body)));
    });
  }

  async serve(handler: (request: unknown) => Promise<unknown>): Promise<void> {
    await this.listenForReplies();
    await this.sub.subscribe(this.keys.nodeRequests(this.self), (message) => {
      let frame: RequestFrame;
      try {
        frame = JSON.parse(message) as RequestFrame;
      } catch {
        return;
      }
      const reply = (ok: boolean, body: unknown) =>
        this.pub
          .publish(
            this.keys.nodeReplies(frame.from),
            JSON.stringify({ id: frame.id, ok, body } satisfies ReplyFrame),
          )
          .catch(() => {});
      handler(frame.body).then(
        (body) => reply(true, body),
        (err: unknown) => reply(false, err instanceof Error ? err.message : String(err)),
      );
    });
  }

  async call(node: string, body: unknown, timeoutMs: number): Promise<unknown> {
    await this.listenForReplies();
    const id = randomUUID();
    const answer = new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new NodeRpcTimeout(`node ${node} did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
    });
    const receivers = await this.pub.publish(
      this.keys.nodeRequests(node),
      JSON.stringify({ id, from: this.self, body } satisfies RequestFrame),
    );
    // Nobody subscribed: the node is gone; no need to wait out the timeout. On a Redis Cluster the
    // count covers only the subscribers of the shard that took the PUBLISH (it reaches the others
    // over the cluster bus, uncounted), so 0 proves nothing there and only the timeout decides.
    if (receivers === 0 && !isRedisCluster(this.pub)) {
      const waiter = this.pending.get(id);
      this.pending.delete(id);
      if (waiter) {
        clearTimeout(waiter.timer);
        waiter.reject(new NodeRpcTimeout(`node ${node} is not listening`));
      }
    }
    return answer;
  }

  async close(): Promise<void> {
    for (const [id, w] of this.pending) {
      clearTimeout(w.timer);
      w.reject(new NodeRpcTimeout('closing'));
      this.pending.delete(id);
    }
  }
}
